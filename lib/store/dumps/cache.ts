/**
 * Summary cache (docs/api.md 6), in the app's data dir, never in the run directory.
 * One parquet file per (rolloutId, evaluation): `rollout_{stem}.summary.parquet`. Its key —
 * the summary version plus size and nanosecond mtime of every source file (the rollout
 * `.pt` and, for train, each `train_data/{rolloutId}_*.pt`) — is stored in the file's
 * key-value metadata; a hit needs an equal key, so any changed, added or removed source
 * invalidates. Writes go to a temp file and are renamed, so a reader never sees half a
 * file. NaN statistics survive (parquet DOUBLE), which the `dump/*` aggregates need.
 * Written with the minimal writer of parquet-lite.ts (plain, uncompressed: cheap to
 * write in a fresh process), read with hyparquet.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import type { FileStamp } from "./files";
import { writeParquetLite } from "./parquet-lite";
import { SUMMARY_VERSION, TRAIN_COLUMNS, type SummaryColumn, type SummaryFrame, type SummaryRow } from "./summary";

const KEY = "rlboard.summary.key";
const COLUMNS = "rlboard.summary.columns";

const BOOL_COLUMNS = new Set<SummaryColumn>(["remove_sample", "mixed_version", "truncated", "alignment_failed"]);
const STRING_COLUMNS = new Set<SummaryColumn>(["status", "weight_version"]);

export function summaryCacheKey(sources: Readonly<Record<string, FileStamp>>): string {
  const files = Object.keys(sources)
    .sort()
    .map((name) => [name, sources[name]?.size, sources[name]?.mtimeNs]);
  return JSON.stringify({ v: SUMMARY_VERSION, files });
}

export function summaryCachePath(cacheDir: string, stem: string): string {
  return path.join(cacheDir, `rollout_${stem}.summary.parquet`);
}

export async function readSummaryCache(abs: string, key: string): Promise<SummaryFrame | null> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(abs);
  } catch {
    return null;
  }
  try {
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const metadata = await parquetMetadataAsync(file);
    const kv = new Map((metadata.key_value_metadata ?? []).map((e) => [e.key, e.value ?? ""]));
    if (kv.get(KEY) !== key) return null;
    const columns = JSON.parse(kv.get(COLUMNS) ?? "[]") as SummaryColumn[];
    const n = Number(metadata.num_rows);
    const rows = n === 0 ? [] : await parquetReadObjects({ file, metadata, compressors });
    return { columns, rows: rows.map((r) => fromCache(r)) };
  } catch (err) {
    console.warn(`[rlboard] ignoring unreadable summary cache ${abs}:`, err);
    return null;
  }
}

function fromCache(r: Record<string, unknown>): SummaryRow {
  const out: Record<string, unknown> = {};
  for (const c of TRAIN_COLUMNS) {
    const v = r[c];
    out[c] = typeof v === "bigint" ? Number(v) : (v ?? null);
  }
  return out as unknown as SummaryRow;
}

export async function writeSummaryCache(abs: string, key: string, frame: SummaryFrame): Promise<void> {
  const columns = TRAIN_COLUMNS.map((c) => ({
    name: c,
    data: frame.rows.map((r) => r[c]),
    type: BOOL_COLUMNS.has(c) ? ("BOOLEAN" as const) : STRING_COLUMNS.has(c) ? ("STRING" as const) : ("DOUBLE" as const),
  }));
  const buf = writeParquetLite(columns, frame.rows.length, [
    { key: KEY, value: key },
    { key: COLUMNS, value: JSON.stringify(frame.columns) },
  ]);
  await fs.mkdir(path.dirname(abs), { recursive: true });
  const tmp = `${abs}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, buf);
  await fs.rename(tmp, abs);
}
