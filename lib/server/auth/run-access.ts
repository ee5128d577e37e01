/**
 * Trajectory access: conversations and per-token data can hold sensitive prompts, so
 * (1) every open of a sample's messages/tokens is written to `trajectory_audit`, and
 * (2) a run can be restricted: then only admins and the users listed for it may read its
 * trajectories (403 for everyone else). Metrics and timelines stay visible to members.
 */
import type { Db } from "@/lib/server/db";
import { findUser, type Role } from "@/lib/server/auth/users";

export interface AuditRow {
  user_name: string;
  run_id: string;
  step: number;
  sample: number;
  kind: "messages" | "tokens";
  at: number;
}

export function recordTrajectoryView(db: Db, row: Omit<AuditRow, "at">, nowS = Date.now() / 1000): void {
  db.prepare("INSERT INTO trajectory_audit (user_name, run_id, step, sample, kind, at) VALUES (?, ?, ?, ?, ?, ?)").run(
    row.user_name,
    row.run_id,
    row.step,
    row.sample,
    row.kind,
    nowS,
  );
}

export function recentAudit(db: Db, limit = 200): AuditRow[] {
  return db
    .prepare("SELECT user_name, run_id, step, sample, kind, at FROM trajectory_audit ORDER BY at DESC, id DESC LIMIT ?")
    .all(limit) as AuditRow[];
}

export function isRestricted(db: Db, runId: string): boolean {
  return db.prepare("SELECT 1 FROM run_restrictions WHERE run_id = ?").get(runId) !== undefined;
}

export function canReadTrajectories(db: Db, runId: string, user: { name: string; role: Role }): boolean {
  if (user.role === "admin" || !isRestricted(db, runId)) return true;
  return (
    db
      .prepare("SELECT 1 FROM run_members m JOIN users u ON u.id = m.user_id WHERE m.run_id = ? AND u.name = ?")
      .get(runId, user.name) !== undefined
  );
}

export interface Restriction {
  run_id: string;
  members: string[];
}

export function listRestrictions(db: Db): Restriction[] {
  const runs = db.prepare("SELECT run_id FROM run_restrictions ORDER BY run_id").all() as { run_id: string }[];
  const members = db.prepare(
    "SELECT u.name FROM run_members m JOIN users u ON u.id = m.user_id WHERE m.run_id = ? ORDER BY u.name",
  );
  return runs.map((r) => ({ run_id: r.run_id, members: (members.all(r.run_id) as { name: string }[]).map((m) => m.name) }));
}

export class RunAccessError extends Error {}

/** Restrict a run to the given users (replacing the previous list). Unknown names throw. */
export function restrictRun(db: Db, runId: string, memberNames: string[], nowS = Date.now() / 1000): void {
  if (!runId) throw new RunAccessError("run id must not be empty");
  const ids = memberNames.map((name) => {
    const u = findUser(db, name);
    if (!u) throw new RunAccessError(`no user named '${name}'`);
    return u.id;
  });
  db.transaction(() => {
    db.prepare("INSERT OR IGNORE INTO run_restrictions (run_id, created_at) VALUES (?, ?)").run(runId, nowS);
    db.prepare("DELETE FROM run_members WHERE run_id = ?").run(runId);
    const add = db.prepare("INSERT INTO run_members (run_id, user_id) VALUES (?, ?)");
    for (const id of ids) add.run(runId, id);
  })();
}

export function unrestrictRun(db: Db, runId: string): void {
  db.transaction(() => {
    db.prepare("DELETE FROM run_members WHERE run_id = ?").run(runId);
    db.prepare("DELETE FROM run_restrictions WHERE run_id = ?").run(runId);
  })();
}

/** True when the server's run index (the `runs` table) holds this id. */
export function knownRun(db: Db, runId: string): boolean {
  return db.prepare("SELECT 1 FROM runs WHERE id = ?").get(runId) !== undefined;
}

/** Who may read a run's trajectories, as lines for a person (`users access RUN_ID`). */
export function describeAccess(db: Db, runId: string): string[] {
  const admins = (db.prepare("SELECT name FROM users WHERE role = 'admin' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  const lines: string[] = [];
  if (!knownRun(db, runId)) lines.push(`note: run '${runId}' is not in the server's run index`);
  if (!isRestricted(db, runId)) {
    const n = (db.prepare("SELECT count(*) AS n FROM users").get() as { n: number }).n;
    lines.push(`'${runId}' is not restricted: every signed-in user (${n}) may read its trajectories`);
    return lines;
  }
  const members = listRestrictions(db).find((r) => r.run_id === runId)?.members ?? [];
  lines.push(`'${runId}' is restricted: trajectories readable by`);
  for (const a of admins) lines.push(`  ${a}\tadmin`);
  for (const m of members.filter((m) => !admins.includes(m))) lines.push(`  ${m}\tallowed`);
  return lines;
}
