/**
 * The per-token parquet mirror `dashboard_columns/rollout_{stem}.parquet` (docs/api.md
 * 1.6, 5; docs/formats.md 5.1): polars-written, zstd, 8-row row groups, LIST columns. A point
 * read resolves `sample_index → row` from the small `sample_index` column once per file
 * version, then decodes only the row group holding that row.
 *
 * A mirror is valid iff its top-level column-name SET equals the six names. When it is
 * absent or invalid the reader rebuilds one from the rollout `.pt`; rebuilt mirrors are
 * written only under the cache dir (never into the run directory), keyed on the
 * rollout file's size and mtime.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { parquetWriteBuffer } from "hyparquet-writer";
import { Lru } from "./lru";
import type { NumArray, SampleRecord } from "./types";

export const MIRROR_COLUMNS = [
  "sample_index",
  "response_length",
  "total_length",
  "tokens",
  "loss_mask",
  "rollout_log_probs",
] as const;

export interface MirrorRow {
  sample_index: number;
  response_length: number;
  total_length: number;
  tokens: NumArray;
  loss_mask: NumArray | null;
  rollout_log_probs: NumArray | null;
}

/** Positional-read AsyncBuffer over a local file (one open handle per operation). */
async function withFileBuffer<T>(abs: string, flags: string | number, fn: (buf: AsyncBuffer, size: number) => Promise<T>): Promise<T> {
  const fh = await fs.open(abs, flags);
  try {
    const { size } = await fh.stat();
    const buf: AsyncBuffer = {
      byteLength: size,
      async slice(start: number, end?: number): Promise<ArrayBuffer> {
        const stop = Math.min(end ?? size, size);
        const len = Math.max(0, stop - start);
        const out = new Uint8Array(len);
        let done = 0;
        while (done < len) {
          const { bytesRead } = await fh.read(out, done, len - done, start + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return out.buffer;
      },
    };
    return await fn(buf, size);
  } finally {
    await fh.close();
  }
}

/** Mirror rows kept per reader (a 32k-token row is ~0.8 MB as JS arrays). */
const ROW_LRU = 8;

interface MirrorIndex {
  valid: boolean;
  metadata: FileMetaData;
  rowOf: Map<number, number>;
  kv: Map<string, string>;
}

function asNum(v: unknown): number {
  return typeof v === "bigint" ? Number(v) : (v as number);
}

function asNumList(v: unknown): NumArray | null {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map((x) => (x === null ? NaN : asNum(x)));
  return v as NumArray;
}

/**
 * Reader of mirror files with an index cache keyed by path + size + mtime, so a file
 * replaced on disk is re-indexed.
 */
export class MirrorReader {
  private readonly indexes = new Lru<string, MirrorIndex>(16);
  /**
   * Rows read last, by file version and sample: the token view asks one sample window by
   * window, and each read decoded the row's whole row group again (#20: warm window).
   */
  private readonly rows = new Lru<string, MirrorRow>(ROW_LRU);

  private async index(abs: string, buf: AsyncBuffer, versionKey: string): Promise<MirrorIndex> {
    const key = `${abs}\u0000${versionKey}`;
    const hit = this.indexes.get(key);
    if (hit) return hit;
    const metadata = await parquetMetadataAsync(buf);
    const names = parquetSchema(metadata).children.map((c) => c.element.name);
    const valid = names.length === MIRROR_COLUMNS.length && MIRROR_COLUMNS.every((c) => names.includes(c));
    const rowOf = new Map<number, number>();
    if (valid) {
      const ids = await parquetReadObjects({ file: buf, metadata, columns: ["sample_index"], compressors });
      ids.forEach((r, i) => {
        const si = r.sample_index as unknown;
        if (si === null || si === undefined) return;
        const n = asNum(si);
        if (!rowOf.has(n)) rowOf.set(n, i);
      });
    }
    const kv = new Map((metadata.key_value_metadata ?? []).map((e) => [e.key, e.value ?? ""]));
    const idx = { valid, metadata, rowOf, kv };
    this.indexes.set(key, idx);
    return idx;
  }

  /**
   * `{ valid:false }` when the file's columns are not the mirror's; `{ valid:true, row }`
   * with `row` null when the sample is absent. `expectKv` (cache mirrors) must match
   * the file's key-value metadata, else the file counts as invalid. A file that is not
   * parquet, or whose pages do not decode, rejects (the caller falls back to the `.pt`).
   * `flags`: open(2) flags (the dump reader passes read-only + O_NOFOLLOW on a realpath).
   */
  async read(
    abs: string,
    versionKey: string,
    sampleIndex: number,
    expectKv?: readonly [string, string],
    flags: string | number = "r",
  ): Promise<{ valid: false } | { valid: true; row: MirrorRow | null }> {
    const rowKey = `${abs}\u0000${versionKey}\u0000${expectKv ? expectKv.join("=") : ""}\u0000${sampleIndex}`;
    const hit = this.rows.get(rowKey);
    if (hit) return { valid: true, row: hit };
    return withFileBuffer(abs, flags, async (buf) => {
      const idx = await this.index(abs, buf, versionKey);
      if (!idx.valid) return { valid: false };
      if (expectKv && idx.kv.get(expectKv[0]) !== expectKv[1]) return { valid: false };
      const i = idx.rowOf.get(sampleIndex);
      if (i === undefined) return { valid: true, row: null };
      const [r] = await parquetReadObjects({
        file: buf,
        metadata: idx.metadata,
        rowStart: i,
        rowEnd: i + 1,
        compressors,
      });
      if (!r) return { valid: true, row: null };
      const row: MirrorRow = {
        sample_index: asNum(r.sample_index),
        response_length: asNum(r.response_length),
        total_length: asNum(r.total_length),
        tokens: asNumList(r.tokens) ?? [],
        loss_mask: asNumList(r.loss_mask),
        rollout_log_probs: asNumList(r.rollout_log_probs),
      };
      this.rows.set(rowKey, row);
      return { valid: true, row };
    });
  }
}

/** Mirror rows of a rollout dump (1.6), float32 log-probs like the polars Float32 column. */
export function mirrorRowsFromSamples(samples: readonly SampleRecord[]): MirrorRow[] {
  return samples.map((s) => ({
    sample_index: s.index ?? -1,
    response_length: s.responseLength,
    total_length: s.tokens.length,
    tokens: s.tokens,
    loss_mask: s.lossMask,
    rollout_log_probs: s.rolloutLogProbs === null ? null : Float32Array.from(s.rolloutLogProbs),
  }));
}

const LIST = (name: string, type: "INT32" | "FLOAT", int8 = false) => [
  { name, repetition_type: "OPTIONAL" as const, num_children: 1, converted_type: "LIST" as const },
  { name: "list", repetition_type: "REPEATED" as const, num_children: 1 },
  {
    name: "element",
    type,
    repetition_type: "OPTIONAL" as const,
    ...(int8 ? { converted_type: "INT_8" as const } : {}),
  },
];

/** Write a mirror file (same schema as polars', 8-row groups) atomically via `.tmp`. */
export async function writeMirror(abs: string, rows: readonly MirrorRow[], kv: readonly [string, string]): Promise<void> {
  const list = (x: NumArray | null) => (x === null ? null : Array.from(x));
  const buf = parquetWriteBuffer({
    columnData: [
      { name: "sample_index", data: rows.map((r) => r.sample_index) },
      { name: "response_length", data: rows.map((r) => r.response_length) },
      { name: "total_length", data: rows.map((r) => r.total_length) },
      { name: "tokens", data: rows.map((r) => list(r.tokens)) },
      { name: "loss_mask", data: rows.map((r) => list(r.loss_mask)) },
      { name: "rollout_log_probs", data: rows.map((r) => list(r.rollout_log_probs)) },
    ],
    schema: [
      { name: "root", num_children: 6 },
      { name: "sample_index", type: "INT32", repetition_type: "OPTIONAL" },
      { name: "response_length", type: "INT32", repetition_type: "OPTIONAL" },
      { name: "total_length", type: "INT32", repetition_type: "OPTIONAL" },
      ...LIST("tokens", "INT32"),
      ...LIST("loss_mask", "INT32", true),
      ...LIST("rollout_log_probs", "FLOAT"),
    ],
    rowGroupSize: 8,
    kvMetadata: [{ key: kv[0], value: kv[1] }],
  });
  await fs.mkdir(path.dirname(abs), { recursive: true });
  const tmp = `${abs}.${process.pid}.tmp`;
  await fs.writeFile(tmp, new Uint8Array(buf));
  await fs.rename(tmp, abs);
}
