/**
 * Login lockout: after MAX_FAILURES failed attempts for one user name from one client IP
 * within the window, that pair is locked for LOCK_SECONDS. Keyed per user+IP so an
 * attacker elsewhere cannot lock a colleague out of their own machine. State lives in
 * SQLite so it survives restarts and is shared by all workers.
 */
import type { Db } from "@/lib/server/db";

export const MAX_FAILURES = 5;
export const LOCK_SECONDS = 300;

export function lockKey(user: string, ip: string): string {
  return `${user.toLowerCase()}|${ip}`;
}

/** Seconds left on a lock, or 0 when attempts are allowed. */
export function lockedFor(db: Db, key: string, nowS = Date.now() / 1000): number {
  const row = db.prepare("SELECT locked_until FROM login_failures WHERE key = ?").get(key) as
    | { locked_until: number | null }
    | undefined;
  if (!row?.locked_until) return 0;
  return Math.max(0, Math.ceil(row.locked_until - nowS));
}

export function recordFailure(db: Db, key: string, nowS = Date.now() / 1000): { failures: number; lockedFor: number } {
  const row = db.prepare("SELECT failures, first_at, locked_until FROM login_failures WHERE key = ?").get(key) as
    | { failures: number; first_at: number; locked_until: number | null }
    | undefined;
  // A lock that ran out, or failures older than the window, start a fresh count.
  const fresh = !row || (row.locked_until !== null && row.locked_until <= nowS) || nowS - row.first_at > LOCK_SECONDS;
  const failures = fresh ? 1 : row.failures + 1;
  const lockedUntil = failures >= MAX_FAILURES ? nowS + LOCK_SECONDS : null;
  db.prepare(
    `INSERT INTO login_failures (key, failures, first_at, locked_until) VALUES (?, ?, ?, ?)
     ON CONFLICT(key) DO UPDATE SET failures = excluded.failures, first_at = excluded.first_at,
       locked_until = excluded.locked_until`,
  ).run(key, failures, fresh ? nowS : row.first_at, lockedUntil);
  return { failures, lockedFor: lockedUntil ? LOCK_SECONDS : 0 };
}

export function clearFailures(db: Db, key: string): void {
  db.prepare("DELETE FROM login_failures WHERE key = ?").run(key);
}
