/** Per-run alert mutes (SQLite `alert_mutes`, migration 0005; docs/api.md 9.5.5). */
import type { Db } from "@/lib/server/db";

export function isMuted(db: Db, runId: string): boolean {
  return db.prepare("SELECT 1 FROM alert_mutes WHERE run_id = ?").get(runId) !== undefined;
}

export function setMuted(db: Db, runId: string, muted: boolean, by: string): void {
  if (muted) db.prepare("INSERT INTO alert_mutes (run_id, muted_by, muted_at) VALUES (?, ?, ?) ON CONFLICT(run_id) DO NOTHING").run(runId, by, Date.now() / 1000);
  else db.prepare("DELETE FROM alert_mutes WHERE run_id = ?").run(runId);
}

export function mutedRuns(db: Db): Set<string> {
  return new Set((db.prepare("SELECT run_id FROM alert_mutes").all() as { run_id: string }[]).map((r) => r.run_id));
}
