/**
 * `npm run users` as an operator types it: a real process over a real data dir.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "@/lib/testing/fixtures";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-cli-users-"));

function users(args: string[], stdin = ""): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "cli", "users.ts"), ...args, "--data-dir", dataDir], {
    cwd: REPO_ROOT,
    input: stdin,
    encoding: "utf8",
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

describe("npm run users", () => {
  it("restrict / access / unrestrict a run", () => {
    expect(users(["add", "root", "--admin", "--password-stdin"], "root-password\n").code).toBe(0);
    expect(users(["add", "alice", "--password-stdin"], "alice-password\n").code).toBe(0);
    expect(users(["add", "bob", "--password-stdin"], "bob-password-1\n").code).toBe(0);

    const open = users(["access", "secret-run"]);
    expect(open.code).toBe(0);
    expect(open.out).toContain("'secret-run' is not restricted: every signed-in user (3)");

    const r = users(["restrict", "secret-run", "--allow", "alice"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("restricted 'secret-run': trajectories readable by admins and 'alice'");
    expect(r.err).toContain("not in the server's run index");

    const acc = users(["access", "secret-run"]);
    expect(acc.out).toContain("'secret-run' is restricted");
    expect(acc.out).toMatch(/^ {2}root\tadmin$/m);
    expect(acc.out).toMatch(/^ {2}alice\tallowed$/m);
    expect(acc.out).not.toContain("bob");

    const unknown = users(["restrict", "secret-run", "--allow", "mallory"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("no user named 'mallory'");

    expect(users(["unrestrict", "secret-run"]).out).toContain("unrestricted 'secret-run'");
    expect(users(["access", "secret-run"]).out).toContain("is not restricted");
  });

  it("refuses whitespace-only and over-long passwords with the same rule as the server", () => {
    const ws = users(["add", "carol", "--password-stdin"], "          \n");
    expect(ws.code).toBe(1);
    expect(ws.err).toContain("password must not be only whitespace");
    const long = users(["add", "carol", "--password-stdin"], "x".repeat(1025));
    expect(long.code).toBe(1);
    expect(long.err).toContain("at most 1024");
    expect(users(["restrict"]).err).toContain("needs a run id");
  });
});
