/**
 * Login lockout: after MAX_FAILURES failed attempts within the window, the key is locked
 * for LOCK_SECONDS. The key is user name + client IP when the client IP is known (a
 * trusted proxy reports it, client-ip.ts), so an attacker elsewhere cannot lock a
 * colleague out; without a trusted proxy it is the user name alone. That trade-off is
 * deliberate: anyone can then lock a user for LOCK_SECONDS, but nobody gets more than
 * MAX_FAILURES guesses per LOCK_SECONDS at a password (docs/deploy.md).
 *
 * An attempt takes its slot BEFORE the password is checked (beginAttempt): the check is
 * asynchronous, so checking "locked?" first and counting the failure afterwards would let
 * a burst of parallel requests all pass the check. State lives in SQLite so it survives
 * restarts and is shared by all workers; better-sqlite3 is synchronous, so the
 * read-and-count of one attempt cannot interleave with another's.
 */
import type { Db } from "@/lib/server/db";

export const MAX_FAILURES = 5;
export const LOCK_SECONDS = 300;

export function lockKey(user: string, ip: string | null): string {
  return ip ? `${user.toLowerCase()}|${ip}` : user.toLowerCase();
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

export type Attempt =
  /** Refused without looking at the password: the key is locked. */
  | { allowed: false; lockedFor: number }
  /** Counted as a failure until `clearFailures` says it succeeded; `last`: it used the final slot. */
  | { allowed: true; last: boolean };

/** Take one attempt's slot (synchronously, before the password check). */
export function beginAttempt(db: Db, key: string, nowS = Date.now() / 1000): Attempt {
  const left = lockedFor(db, key, nowS);
  if (left > 0) return { allowed: false, lockedFor: left };
  return { allowed: true, last: recordFailure(db, key, nowS).lockedFor > 0 };
}

export function clearFailures(db: Db, key: string): void {
  db.prepare("DELETE FROM login_failures WHERE key = ?").run(key);
}

/** Forget every lockout of one user, whatever the address (the demo login at start). */
export function clearUserFailures(db: Db, user: string): void {
  const name = user.toLowerCase();
  db.prepare("DELETE FROM login_failures WHERE key = ? OR substr(key, 1, ?) = ?").run(name, name.length + 1, `${name}|`);
}
