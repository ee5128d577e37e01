/**
 * Run tags and notes (table run_annotations, migration 0004): the lab's own labels for a
 * run, kept in SQLite and never in the run directory (run dirs are read-only for the web
 * process). Edited by any signed-in member through lib/actions/runs.ts.
 */
import type { Db } from "@/lib/server/db";

export const MAX_TAGS = 16;
export const MAX_TAG_CHARS = 40;
export const MAX_NOTES_CHARS = 2000;

export interface RunAnnotation {
  tags: string[];
  notes: string;
}

export class AnnotationError extends Error {}

/** "a, b ,a" → ["a", "b"] (trimmed, deduplicated, in order); throws on limits. */
export function parseTags(text: string): string[] {
  const tags: string[] = [];
  for (const t of text.split(",").map((s) => s.trim())) if (t && !tags.includes(t)) tags.push(t);
  if (tags.length > MAX_TAGS) throw new AnnotationError(`at most ${MAX_TAGS} tags`);
  const long = tags.find((t) => t.length > MAX_TAG_CHARS);
  if (long) throw new AnnotationError(`tag '${long.slice(0, 20)}…' is longer than ${MAX_TAG_CHARS} characters`);
  return tags;
}

export function allAnnotations(db: Db): Map<string, RunAnnotation> {
  const rows = db.prepare("SELECT run_id, tags, notes FROM run_annotations").all() as { run_id: string; tags: string; notes: string }[];
  const out = new Map<string, RunAnnotation>();
  for (const r of rows) {
    let tags: string[] = [];
    try {
      const parsed = JSON.parse(r.tags) as unknown;
      if (Array.isArray(parsed)) tags = parsed.filter((t): t is string => typeof t === "string");
    } catch {
      tags = [];
    }
    out.set(r.run_id, { tags, notes: r.notes });
  }
  return out;
}

export function setAnnotation(db: Db, runId: string, a: RunAnnotation, userName: string, nowS = Date.now() / 1000): void {
  if (a.notes.length > MAX_NOTES_CHARS) throw new AnnotationError(`notes are limited to ${MAX_NOTES_CHARS} characters`);
  if (a.tags.length === 0 && a.notes.trim() === "") {
    db.prepare("DELETE FROM run_annotations WHERE run_id = ?").run(runId);
    return;
  }
  db.prepare(
    `INSERT INTO run_annotations (run_id, tags, notes, updated_by, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(run_id) DO UPDATE SET tags = excluded.tags, notes = excluded.notes, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  ).run(runId, JSON.stringify(a.tags), a.notes, userName, nowS);
}
