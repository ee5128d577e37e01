/**
 * Users and API tokens over the SQLite handle. Shared by the web process (login, admin
 * page, Bearer auth) and the `npm run users` CLI, so every function takes the Db.
 * Tokens: `rlb_<32 random bytes base64url>`; only sha256(token) is stored, so a leaked
 * database does not leak usable tokens.
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import type { Db } from "@/lib/server/db";
import { hashPassword, randomPassword, verifyPassword } from "@/lib/server/auth/passwords";

export type Role = "admin" | "member";

export interface UserRow {
  id: number;
  name: string;
  role: Role;
  provider: string;
  created_at: number;
}

export class UserError extends Error {}

/** What a session check needs: identity, role and the session generation (0003 migration). */
export interface SessionRow {
  id: number;
  name: string;
  role: Role;
  session_gen: number;
}

export function sessionRowById(db: Db, id: number): SessionRow | null {
  return (db.prepare("SELECT id, name, role, session_gen FROM users WHERE id = ?").get(id) as SessionRow | undefined) ?? null;
}

/**
 * A new user's first session generation is random: SQLite may give a re-created user the
 * id of a removed one, and a session of the removed user must not fit the new row.
 */
function firstGeneration(): number {
  return randomInt(1, 2 ** 47);
}

/** Ends every browser session of the user (their tokens carry the old generation). */
function endSessions(db: Db, userId: number): void {
  db.prepare("UPDATE users SET session_gen = session_gen + 1 WHERE id = ?").run(userId);
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

export function validateUserName(name: string): string {
  if (!NAME_RE.test(name)) {
    throw new UserError(
      `invalid user name '${name}': use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit`,
    );
  }
  return name;
}

const now = () => Date.now() / 1000;

export function listUsers(db: Db): UserRow[] {
  return db.prepare("SELECT id, name, role, provider, created_at FROM users ORDER BY name").all() as UserRow[];
}

export function findUser(db: Db, name: string): (UserRow & { password_hash: string | null; session_gen: number }) | null {
  return (
    (db
      .prepare("SELECT id, name, role, provider, created_at, password_hash, session_gen FROM users WHERE name = ?")
      .get(name) as (UserRow & { password_hash: string | null; session_gen: number }) | undefined) ?? null
  );
}

export function countUsers(db: Db): number {
  return (db.prepare("SELECT count(*) AS n FROM users").get() as { n: number }).n;
}

export async function addUser(db: Db, name: string, password: string, role: Role): Promise<UserRow> {
  validateUserName(name);
  if (findUser(db, name)) throw new UserError(`user '${name}' already exists`);
  const hash = await hashPassword(password);
  db.prepare("INSERT INTO users (name, password_hash, role, created_at, session_gen) VALUES (?, ?, ?, ?, ?)").run(name, hash, role, now(), firstGeneration());
  return findUser(db, name)!;
}

/** OIDC/GitHub sign-in: find or create a password-less user for the external identity. */
export function upsertExternalUser(db: Db, name: string, provider: string, role: Role): UserRow {
  const existing = findUser(db, name);
  if (existing) return existing;
  db.prepare("INSERT INTO users (name, password_hash, role, provider, created_at, session_gen) VALUES (?, NULL, ?, ?, ?, ?)").run(
    name,
    role,
    provider,
    now(),
    firstGeneration(),
  );
  return findUser(db, name)!;
}

export function removeUser(db: Db, name: string): void {
  const user = findUser(db, name);
  if (!user) throw new UserError(`no user named '${name}'`);
  if (user.role === "admin") {
    const admins = (db.prepare("SELECT count(*) AS n FROM users WHERE role = 'admin'").get() as { n: number }).n;
    if (admins <= 1) throw new UserError(`'${name}' is the last admin; add another admin first`);
  }
  db.prepare("DELETE FROM users WHERE id = ?").run(user.id);
}

export async function setPassword(db: Db, name: string, password: string): Promise<void> {
  const user = findUser(db, name);
  if (!user) throw new UserError(`no user named '${name}'`);
  const hash = await hashPassword(password);
  db.transaction(() => {
    db.prepare("UPDATE users SET password_hash = ? WHERE id = ?").run(hash, user.id);
    endSessions(db, user.id);
  })();
}

export function setRole(db: Db, name: string, role: Role): void {
  const user = findUser(db, name);
  if (!user) throw new UserError(`no user named '${name}'`);
  if (user.role === "admin" && role !== "admin") {
    const admins = (db.prepare("SELECT count(*) AS n FROM users WHERE role = 'admin'").get() as { n: number }).n;
    if (admins <= 1) throw new UserError(`'${name}' is the last admin`);
  }
  if (user.role === role) return;
  db.transaction(() => {
    db.prepare("UPDATE users SET role = ? WHERE id = ?").run(role, user.id);
    endSessions(db, user.id);
  })();
}

export async function checkPassword(db: Db, name: string, password: string): Promise<(UserRow & { session_gen: number }) | null> {
  const user = findUser(db, name);
  if (!user?.password_hash) {
    // Spend the same time as a real check so user names can't be probed by timing.
    await verifyPassword(password, DUMMY_HASH);
    return null;
  }
  return (await verifyPassword(password, user.password_hash)) ? user : null;
}

const DUMMY_HASH =
  "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function createToken(db: Db, name: string): string {
  const user = findUser(db, name);
  if (!user) throw new UserError(`no user named '${name}'`);
  const token = `rlb_${randomBytes(32).toString("base64url")}`;
  db.prepare("INSERT INTO api_tokens (user_id, token_hash, prefix, created_at) VALUES (?, ?, ?, ?)").run(
    user.id,
    hashToken(token),
    token.slice(0, 8),
    now(),
  );
  return token;
}

export function revokeTokens(db: Db, name: string): number {
  const user = findUser(db, name);
  if (!user) throw new UserError(`no user named '${name}'`);
  // "Revoke everything" also signs the user out of every browser.
  return db.transaction(() => {
    endSessions(db, user.id);
    return db.prepare("UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL").run(now(), user.id).changes;
  })();
}

export interface TokenInfo {
  prefix: string;
  created_at: number;
  last_used_at: number | null;
}

export function listTokens(db: Db, name: string): TokenInfo[] {
  return db
    .prepare(
      `SELECT t.prefix, t.created_at, t.last_used_at FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE u.name = ? AND t.revoked_at IS NULL ORDER BY t.created_at`,
    )
    .all(name) as TokenInfo[];
}

export function userForToken(db: Db, token: string): UserRow | null {
  const row = db
    .prepare(
      `SELECT u.id, u.name, u.role, u.provider, u.created_at, t.id AS token_id, t.last_used_at
       FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
    )
    .get(hashToken(token)) as (UserRow & { token_id: number; last_used_at: number | null }) | undefined;
  if (!row) return null;
  const t = now();
  // Touch at most once a minute: keeps the listing useful without a write per request.
  if (row.last_used_at === null || t - row.last_used_at > 60) {
    db.prepare("UPDATE api_tokens SET last_used_at = ? WHERE id = ?").run(t, row.token_id);
  }
  return { id: row.id, name: row.name, role: row.role, provider: row.provider, created_at: row.created_at };
}

/** First start with no users: create `admin` with a random password, returned once. */
export async function ensureFirstAdmin(db: Db): Promise<{ name: string; password: string } | null> {
  if (countUsers(db) > 0) return null;
  const password = randomPassword();
  await addUser(db, "admin", password, "admin");
  return { name: "admin", password };
}
