import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/server/db";
import { addUser } from "@/lib/server/auth/users";
import { canReadTrajectories, listRestrictions, recentAudit, recordTrajectoryView, restrictRun, unrestrictRun } from "@/lib/server/auth/run-access";

describe("restricted runs and the trajectory audit", () => {
  it("only admins and listed users read a restricted run's trajectories", async () => {
    const db = openDatabase(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-acc-")));
    await addUser(db, "ann", "ann-password", "member");
    await addUser(db, "ben", "ben-password", "member");
    const ann = { name: "ann", role: "member" as const };
    const ben = { name: "ben", role: "member" as const };
    const boss = { name: "boss", role: "admin" as const };
    expect(canReadTrajectories(db, "r1", ben)).toBe(true);
    restrictRun(db, "r1", ["ann"]);
    expect(canReadTrajectories(db, "r1", ann)).toBe(true);
    expect(canReadTrajectories(db, "r1", ben)).toBe(false);
    expect(canReadTrajectories(db, "r1", boss)).toBe(true);
    expect(canReadTrajectories(db, "r2", ben)).toBe(true);
    expect(listRestrictions(db)).toEqual([{ run_id: "r1", members: ["ann"] }]);
    expect(() => restrictRun(db, "r1", ["nobody"])).toThrow(/no user/);
    unrestrictRun(db, "r1");
    expect(canReadTrajectories(db, "r1", ben)).toBe(true);
  });

  it("records who opened which sample, newest first", () => {
    const db = openDatabase(fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-acc-")));
    recordTrajectoryView(db, { user_name: "ann", run_id: "r1", step: 2, sample: 7, kind: "tokens" }, 100);
    recordTrajectoryView(db, { user_name: "ben", run_id: "r1", step: 3, sample: 1, kind: "messages" }, 200);
    expect(recentAudit(db).map((a) => [a.user_name, a.step, a.sample, a.kind])).toEqual([
      ["ben", 3, 1, "messages"],
      ["ann", 2, 7, "tokens"],
    ]);
  });
});
