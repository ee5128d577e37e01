/**
 * The runs people opened last, newest first: what a server restart warms before the first
 * request (lib/server/warmup.ts, #20). A lab restarts its server for a deploy while people
 * keep the same runs open; the newest run on disk is often not one of them.
 *
 * Only run ids and times are kept (never who opened them), in the `run_opens` table
 * (prisma/migrations/0006), at most RECENT_KEEP rows. A run is noted at most once per
 * NOTE_EVERY_MS per process, so a dashboard polling every second costs no write per
 * request. Noting never fails a request: a full or read-only disk only costs the next
 * restart its order.
 */
import type { Db } from "@/lib/server/db";

export const RECENT_KEEP = 64;
export const NOTE_EVERY_MS = 60_000;

const noted = new WeakMap<Db, Map<string, number>>();

/** Record that `runId` (already resolved by the registry) was opened at `nowMs`. Returns whether a row was written. */
export function noteRunOpened(db: Db, runId: string, nowMs = Date.now()): boolean {
  let seen = noted.get(db);
  if (!seen) noted.set(db, (seen = new Map<string, number>()));
  const last = seen.get(runId);
  if (last !== undefined && nowMs - last < NOTE_EVERY_MS) return false;
  seen.set(runId, nowMs);
  try {
    db.transaction(() => {
      db.prepare(
        "INSERT INTO run_opens (run_id, opened_at) VALUES (?, ?) ON CONFLICT(run_id) DO UPDATE SET opened_at = excluded.opened_at",
      ).run(runId, nowMs / 1000);
      db.prepare("DELETE FROM run_opens WHERE run_id NOT IN (SELECT run_id FROM run_opens ORDER BY opened_at DESC LIMIT ?)").run(
        RECENT_KEEP,
      );
    })();
    return true;
  } catch {
    return false;
  }
}

/** Run ids by last open, newest first (ids of runs gone since are the caller's to skip). */
export function recentlyOpenedRuns(db: Db, limit = RECENT_KEEP): string[] {
  return (db.prepare("SELECT run_id FROM run_opens ORDER BY opened_at DESC, run_id LIMIT ?").all(limit) as { run_id: string }[]).map(
    (r) => r.run_id,
  );
}
