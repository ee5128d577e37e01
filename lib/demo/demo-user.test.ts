import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lockKey, lockedFor, recordFailure } from "@/lib/server/auth/lockout";
import { addUser, checkPassword, findUser } from "@/lib/server/auth/users";
import { openDatabase, type Db } from "@/lib/server/db";
import { DEMO_USER, resetDemoUser } from "./demo-user";

let dir: string;
let db: Db;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-demo-user-"));
  db = openDatabase(dir);
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("resetDemoUser", () => {
  it("creates an admin 'demo' user on first start", async () => {
    const login = await resetDemoUser(db);
    expect(login).toMatchObject({ name: DEMO_USER, created: true });
    expect(findUser(db, DEMO_USER)?.role).toBe("admin");
    expect(await checkPassword(db, DEMO_USER, login.password)).not.toBeNull();
  });

  it("replaces the password on every start: the previous one stops working", async () => {
    const first = await resetDemoUser(db);
    const second = await resetDemoUser(db);
    expect(second.created).toBe(false);
    expect(second.password).not.toBe(first.password);
    expect(await checkPassword(db, DEMO_USER, first.password)).toBeNull();
    expect(await checkPassword(db, DEMO_USER, second.password)).not.toBeNull();
  });

  it("promotes an existing member and clears a local lockout", async () => {
    await addUser(db, DEMO_USER, "member-password", "member");
    for (let i = 0; i < 10; i++) recordFailure(db, lockKey(DEMO_USER, "127.0.0.1"));
    expect(lockedFor(db, lockKey(DEMO_USER, "127.0.0.1"))).toBeGreaterThan(0);
    await resetDemoUser(db);
    expect(findUser(db, DEMO_USER)?.role).toBe("admin");
    expect(lockedFor(db, lockKey(DEMO_USER, "127.0.0.1"))).toBe(0);
  });
});
