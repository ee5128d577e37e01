/**
 * Trajectory sidecar `trajectory/{stem}.jsonl` (docs/api.md 1.5, 7): one JSON object per
 * line written by Python (bare NaN/Infinity possible), indexed by `sample_index` with
 * later duplicates winning. A missing file is the normal "no conversation recorded" case.
 */
import fs from "node:fs/promises";
import { badRequest } from "@/lib/api/errors";
import { parseLenientJson } from "./lenient-json";

export type SidecarIndex = Map<number | null, Record<string, unknown>>;

export async function readSidecar(abs: string, rel: string): Promise<SidecarIndex> {
  const text = await fs.readFile(abs, "utf8");
  const index: SidecarIndex = new Map();
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
    } catch (err) {
      // A JSON error is a ValueError in the reference, hence 400.
      throw badRequest(`corrupt record in ${rel} line ${lineNo}: ${(err as Error).message}`);
    }
    if (typeof row !== "object" || row === null || Array.isArray(row)) continue;
    const si = (row as { sample_index?: unknown }).sample_index;
    index.set(typeof si === "number" ? si : null, row as Record<string, unknown>);
  }
  return index;
}
