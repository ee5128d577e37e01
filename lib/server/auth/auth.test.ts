import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { applyMigrations, openDatabase, type Db } from "@/lib/server/db";
import { hashPassword, passwordProblem, PASSWORD_MAX, verifyPassword } from "@/lib/server/auth/passwords";
import { clearFailures, LOCK_SECONDS, lockKey, lockedFor, MAX_FAILURES, recordFailure } from "@/lib/server/auth/lockout";
import {
  addUser,
  checkPassword,
  createToken,
  ensureFirstAdmin,
  hashToken,
  removeUser,
  revokeTokens,
  userForToken,
  UserError,
} from "@/lib/server/auth/users";
import { loadOrCreateSecret } from "@/lib/server/auth/secret";

const dbs: Db[] = [];
function freshDb(): { db: Db; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-auth-"));
  const db = openDatabase(dir);
  dbs.push(db);
  return { db, dir };
}
afterEach(() => {
  while (dbs.length) dbs.pop()!.close();
});

describe("password hashing", () => {
  it("verifies the right password and rejects a wrong one", async () => {
    const h = await hashPassword("correct horse");
    expect(h).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(h).not.toContain("correct horse");
    expect(await verifyPassword("correct horse", h)).toBe(true);
    expect(await verifyPassword("correct horsf", h)).toBe(false);
  });
  it("salts: the same password hashes differently", async () => {
    expect(await hashPassword("same-password")).not.toBe(await hashPassword("same-password"));
  });
  it("rejects short passwords and malformed stored hashes", async () => {
    await expect(hashPassword("short")).rejects.toThrow(/at least 8/);
    expect(await verifyPassword("x", "md5$abc")).toBe(false);
  });
});

describe("users and tokens", () => {
  it("checks credentials against the users table", async () => {
    const { db } = freshDb();
    await addUser(db, "alice", "alice-password", "member");
    expect((await checkPassword(db, "alice", "alice-password"))?.role).toBe("member");
    expect(await checkPassword(db, "alice", "nope-nope-nope")).toBeNull();
    expect(await checkPassword(db, "mallory", "alice-password")).toBeNull();
    await expect(addUser(db, "alice", "another-pass", "admin")).rejects.toBeInstanceOf(UserError);
    await expect(addUser(db, "../etc", "another-pass", "admin")).rejects.toThrow(/invalid user name/);
  });

  it("stores only a hash of API tokens and resolves a token to its user", async () => {
    const { db } = freshDb();
    await addUser(db, "bob", "bob-password", "admin");
    const token = createToken(db, "bob");
    expect(token).toMatch(/^rlb_[A-Za-z0-9_-]{40,}$/);
    const rows = db.prepare("SELECT token_hash FROM api_tokens").all() as { token_hash: string }[];
    expect(rows).toEqual([{ token_hash: hashToken(token) }]);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(userForToken(db, token)?.name).toBe("bob");
    expect(userForToken(db, token + "x")).toBeNull();
    expect(revokeTokens(db, "bob")).toBe(1);
    expect(userForToken(db, token)).toBeNull();
  });

  it("creates the first admin once, with a random password that works", async () => {
    const { db } = freshDb();
    const first = await ensureFirstAdmin(db);
    expect(first?.name).toBe("admin");
    expect(first!.password.length).toBeGreaterThanOrEqual(16);
    expect((await checkPassword(db, "admin", first!.password))?.role).toBe("admin");
    expect(await ensureFirstAdmin(db)).toBeNull();
  });

  it("refuses to remove the last admin", async () => {
    const { db } = freshDb();
    await addUser(db, "root", "root-password", "admin");
    expect(() => removeUser(db, "root")).toThrow(/last admin/);
    await addUser(db, "root2", "root-password", "admin");
    removeUser(db, "root");
    expect(() => removeUser(db, "root")).toThrow(/no user/);
  });
});

describe("lockout", () => {
  it(`locks a user+IP after ${MAX_FAILURES} failures for ${LOCK_SECONDS} s, per IP`, () => {
    const { db } = freshDb();
    const key = lockKey("Alice", "10.1.1.1");
    const t0 = 1_000_000;
    for (let i = 1; i < MAX_FAILURES; i++) expect(recordFailure(db, key, t0 + i).lockedFor).toBe(0);
    expect(recordFailure(db, key, t0 + MAX_FAILURES).lockedFor).toBe(LOCK_SECONDS);
    expect(lockedFor(db, key, t0 + MAX_FAILURES + 1)).toBe(LOCK_SECONDS - 1);
    expect(lockedFor(db, lockKey("alice", "10.9.9.9"), t0 + 6)).toBe(0);
    expect(lockedFor(db, key, t0 + MAX_FAILURES + LOCK_SECONDS + 1)).toBe(0);
    // After the lock runs out the count starts again.
    expect(recordFailure(db, key, t0 + MAX_FAILURES + LOCK_SECONDS + 2).failures).toBe(1);
    clearFailures(db, key);
    expect(lockedFor(db, key, t0)).toBe(0);
  });
});

describe("migrations", () => {
  it("upgrades an existing database without losing rows and is idempotent", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-mig-"));
    const migDir = path.join(dir, "migrations");
    fs.mkdirSync(migDir);
    fs.copyFileSync(path.join("prisma/migrations/0001_init.sql"), path.join(migDir, "0001_init.sql"));
    // Simulate a database created by an older release: only 0001 applied, with data in it.
    const old = new Database(path.join(dir, "old.db"));
    expect(applyMigrations(old, migDir)).toEqual(["0001_init.sql"]);
    old.prepare("INSERT INTO users (name, password_hash, role, created_at) VALUES ('carol', NULL, 'member', 1)").run();
    fs.copyFileSync("prisma/migrations/0002_run_access.sql", path.join(migDir, "0002_run_access.sql"));
    expect(applyMigrations(old, migDir)).toEqual(["0002_run_access.sql"]);
    expect(applyMigrations(old, migDir)).toEqual([]);
    expect(old.prepare("SELECT name FROM users").all()).toEqual([{ name: "carol" }]);
    expect(old.prepare("SELECT count(*) AS n FROM run_restrictions").get()).toEqual({ n: 0 });
    old.close();
  });
});

describe("session secret", () => {
  it("generates a 0600 secret once and reuses it; AUTH_SECRET wins", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-secret-"));
    const a = loadOrCreateSecret(dir, null);
    expect(a.length).toBeGreaterThanOrEqual(32);
    expect(fs.statSync(path.join(dir, "auth-secret")).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSecret(dir, null)).toBe(a);
    expect(loadOrCreateSecret(dir, "from-env-secret-value")).toBe("from-env-secret-value");
  });
});

describe("hardening (#11 item 7)", () => {
  it("refuses a password of only whitespace, and the set/typed length limits agree", async () => {
    const { db } = freshDb();
    await expect(addUser(db, "ws", " ".repeat(12), "member")).rejects.toThrow(/only whitespace/);
    await expect(addUser(db, "ws", "\t\n  \t\n  ", "member")).rejects.toThrow(/only whitespace/);
    await expect(addUser(db, "long", "x".repeat(PASSWORD_MAX + 1), "member")).rejects.toThrow(`at most ${PASSWORD_MAX}`);
    await addUser(db, "max", "x".repeat(PASSWORD_MAX), "member");
    // The longest password that can be set can also be typed at the login form.
    expect((await checkPassword(db, "max", "x".repeat(PASSWORD_MAX)))?.name).toBe("max");
    expect(passwordProblem("  padded but fine  ")).toBeNull();
  });

  it("creates rlboard.db and its WAL readable by the owner only", async () => {
    const { db, dir } = freshDb();
    await addUser(db, "perm", "perm-password", "member");
    for (const f of ["rlboard.db", "rlboard.db-wal", "rlboard.db-shm"]) {
      const p = path.join(dir, f);
      expect(fs.existsSync(p), f).toBe(true);
      expect((fs.statSync(p).mode & 0o777).toString(8), f).toBe("600");
    }
  });

  it("tightens an existing world-readable database to 0600", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-perm-"));
    fs.writeFileSync(path.join(dir, "rlboard.db"), "", { mode: 0o644 });
    fs.chmodSync(path.join(dir, "rlboard.db"), 0o644);
    const db = openDatabase(dir);
    dbs.push(db);
    expect((fs.statSync(path.join(dir, "rlboard.db")).mode & 0o777).toString(8)).toBe("600");
  });
});
