/**
 * Trajectory sidecar `trajectory/{stem}.jsonl` (docs/api.md 1.5, 7): one JSON object per
 * line written by Python (bare NaN/Infinity possible), indexed by `sample_index` with
 * later duplicates winning. A missing file is the normal "no conversation recorded" case.
 *
 * A torn or garbage line fails only the sample it belongs to (issue #11 item 16):
 *  - the line's `"sample_index": N` is looked for in its raw text; when found, sample N
 *    is marked broken at that line number — unless a valid line for N exists (then the
 *    valid record answers: a readable conversation is what a user wants);
 *  - a line whose sample cannot be told belongs to none: every other sample answers;
 *  - a broken sample answers an error naming the file and the line number, never the
 *    line's content (a JSON parse message quotes it, so it is not passed on).
 */
import { parseLenientJson } from "@/lib/store/format";

export interface SidecarIndex {
  /** Valid records by `sample_index` (null: a record without an integer index). */
  rows: Map<number | null, Record<string, unknown>>;
  /** Samples with no valid record but at least one unparsable line: the last such line (1-based). */
  broken: Map<number, number>;
  /** Unparsable complete lines in the file (attributable or not). */
  corruptLines: number;
}

const SAMPLE_INDEX = /"sample_index"\s*:\s*(-?\d+)\s*[,}]/;

export function parseSidecar(text: string): SidecarIndex {
  const rows: SidecarIndex["rows"] = new Map();
  const brokenAt = new Map<number, number>();
  let corruptLines = 0;
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    lineNo++;
    if (!line) continue;
    let row: unknown;
    try {
      row = parseLenientJson(line);
    } catch {
      corruptLines++;
      const m = SAMPLE_INDEX.exec(line);
      if (m) brokenAt.set(Number(m[1]), lineNo);
      continue;
    }
    if (typeof row !== "object" || row === null || Array.isArray(row)) continue;
    const si = (row as { sample_index?: unknown }).sample_index;
    rows.set(typeof si === "number" ? si : null, row as Record<string, unknown>);
  }
  const broken = new Map<number, number>();
  for (const [si, line] of brokenAt) if (!rows.has(si)) broken.set(si, line);
  return { rows, broken, corruptLines };
}
