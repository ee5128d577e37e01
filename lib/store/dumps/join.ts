/**
 * The rollout ⋈ train join (spec api.md 2): per-sample location index over the train
 * shards, TP/PP dedup (the lowest-ranked location is primary), length consistency
 * assertions, context-parallel layout (recorded `cp_rank`/`cp_size`, or the legacy probe
 * over `rollout_log_probs`), CP reassembly of the seven per-token fields and the
 * batch-global `raw_reward` lookup.
 *
 * It works over `ShardSource`, an abstraction of one `train_data/{rid}_{rank}.pt` whose
 * tensors are materialised on demand, so the token point-read path reads only the
 * storages of one sample. Inconsistencies are plain Errors (HTTP 500); a missing required
 * column is a 404 like the reference's KeyError.
 */
import { notFound } from "@/lib/api/errors";
import { expectedWidth, reassemble, type CpGeometry } from "./cp";
import { PER_TOKEN_FIELDS, type NumArray, type PerTokenField, type TrainRow } from "./types";

/** One train shard file as the join sees it. Row numbers index its per-row columns. */
export interface ShardSource {
  /** Bare file name, e.g. `3_5.pt`. */
  readonly fileName: string;
  /** Top-level `rank` (null when absent). */
  readonly rank: number | null;
  readonly cpRank: number | null;
  readonly cpSize: number | null;
  readonly qkvFormat: string | null;
  /** Column exists in `rollout_data` and is not None. */
  hasColumn(col: string): boolean;
  /** Entry `row` of a per-row column as a plain JS scalar (number/bool/string/array/null). */
  scalar(col: string, row: number): Promise<unknown>;
  /** Entry `row` of a per-row tensor column as numbers (null when the entry is None). */
  rowArray(col: string, row: number): Promise<NumArray | null>;
  /** Whole list/1-D column as plain JS values (for `raw_reward`, `sample_indices`). */
  columnValues(col: string): Promise<unknown[] | null>;
}

export interface Location {
  shard: number;
  row: number;
}

export const REQUIRED_TRAIN_COLUMNS = [
  "sample_indices",
  "tokens",
  "response_lengths",
  "total_lengths",
  "rewards",
  "loss_masks",
] as const;

function requireColumn(src: ShardSource, col: string): void {
  if (!src.hasColumn(col)) throw notFound(`'${col}' missing from train dump ${src.fileName}`);
}

export function toInt(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  throw new Error(`${what}: expected an integer, got ${String(v)}`);
}

export function toFloat(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v !== null && typeof v === "object" && "length" in v && (v as ArrayLike<unknown>).length === 1) {
    return toFloat((v as ArrayLike<unknown>)[0]); // a 1-element tensor
  }
  return null;
}

/**
 * Index `sample_indices` of every shard in shard order. When `batchPosition` is given
 * (full join) every referenced sample must exist in the rollout dump.
 */
export async function indexLocations(
  shards: readonly ShardSource[],
  batchPosition?: ReadonlyMap<number, number>,
): Promise<Map<number, Location[]>> {
  const locations = new Map<number, Location[]>();
  for (let s = 0; s < shards.length; s++) {
    const src = shards[s] as ShardSource;
    requireColumn(src, "sample_indices");
    const ids = (await src.columnValues("sample_indices")) ?? [];
    for (let r = 0; r < ids.length; r++) {
      const si = toInt(ids[r], `sample_indices of ${src.fileName}`);
      if (batchPosition && !batchPosition.has(si)) {
        throw new Error(`train dump ${src.fileName} references sample_index ${si} absent from the rollout dump`);
      }
      let list = locations.get(si);
      if (!list) locations.set(si, (list = []));
      list.push({ shard: s, row: r });
    }
  }
  return locations;
}

interface CpLayout {
  cpSize: number;
  layout: Map<number, number>; // shard → cp_rank
  ok: boolean;
}

function arraysEqual(a: NumArray, b: NumArray): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function resolveLayout(
  shards: readonly ShardSource[],
  locs: readonly Location[],
  geom: Omit<CpGeometry, "cpSize">,
): Promise<CpLayout> {
  const primary = shards[(locs[0] as Location).shard] as ShardSource;
  const recorded = locs.filter((l) => (shards[l.shard] as ShardSource).cpRank !== null);
  if (recorded.length > 0) {
    const layout = new Map<number, number>();
    for (const l of recorded) layout.set(l.shard, (shards[l.shard] as ShardSource).cpRank as number);
    const cpSize = primary.cpSize ? primary.cpSize : 1;
    return { cpSize, layout, ok: new Set(layout.values()).size === cpSize };
  }
  // Legacy probe: distinct rollout_log_probs slices identify the CP ranks.
  const holders = locs
    .filter((l) => (shards[l.shard] as ShardSource).hasColumn("rollout_log_probs"))
    .map((l) => ({ ...l, rank: (shards[l.shard] as ShardSource).rank ?? l.shard }))
    .sort((a, b) => a.rank - b.rank || a.shard - b.shard || a.row - b.row);
  const distinct: NumArray[] = [];
  const layout = new Map<number, number>();
  for (const h of holders) {
    const t = await (shards[h.shard] as ShardSource).rowArray("rollout_log_probs", h.row);
    if (t === null) continue;
    let idx = distinct.findIndex((d) => arraysEqual(d, t));
    if (idx < 0) {
      idx = distinct.length;
      distinct.push(t);
    }
    layout.set(h.shard, idx);
  }
  if (distinct.length === 0) {
    return { cpSize: 1, layout: new Map(locs.map((l) => [l.shard, 0])), ok: true };
  }
  const cpSize = distinct.length;
  if (cpSize === 1) return { cpSize, layout, ok: true };
  const g: CpGeometry = { ...geom, cpSize, qkvFormat: "thd", maxSeqLen: null };
  const widths = distinct.map((d) => d.length);
  const sum = widths.reduce((a, b) => a + b, 0);
  const fits = sum === geom.responseLength && widths.every((w, k) => w === expectedWidth(g, k));
  return fits ? { cpSize, layout, ok: true } : { cpSize, layout: new Map(), ok: false };
}

/**
 * Build the TrainRow of one sample from its ordered locations (2.2, 2.4). `rawReward`
 * is left null; the full join fills it in.
 */
export async function buildTrainRow(
  sampleIndex: number,
  shards: readonly ShardSource[],
  locs: readonly Location[],
  fields: readonly PerTokenField[] = PER_TOKEN_FIELDS,
): Promise<TrainRow> {
  const first = locs[0];
  if (first === undefined) throw new Error(`sample ${sampleIndex} has no train location`);
  const primary = shards[first.shard] as ShardSource;
  for (const col of REQUIRED_TRAIN_COLUMNS) requireColumn(primary, col);
  const r = first.row;
  const responseLength = toInt(await primary.scalar("response_lengths", r), "response_lengths");
  const totalLength = toInt(await primary.scalar("total_lengths", r), "total_lengths");
  for (const l of locs.slice(1)) {
    const other = shards[l.shard] as ShardSource;
    const rl = toInt(await other.scalar("response_lengths", l.row), "response_lengths");
    const tl = toInt(await other.scalar("total_lengths", l.row), "total_lengths");
    if (rl !== responseLength || tl !== totalLength) {
      throw new Error(
        `rank ${other.rank ?? l.shard} disagrees with rank ${primary.rank ?? first.shard} on sample ${sampleIndex} lengths`,
      );
    }
  }
  const lossMask = (await primary.rowArray("loss_masks", r)) ?? new Int32Array(0);
  const truncatedRaw = primary.hasColumn("truncated") ? await primary.scalar("truncated", r) : undefined;
  const maxSeqLen = primary.hasColumn("max_seq_lens") ? toFloat(await primary.scalar("max_seq_lens", r)) : null;
  const reward = toFloat(await primary.scalar("rewards", r)) ?? NaN;

  const geom = { totalLength, responseLength, qkvFormat: primary.qkvFormat ?? "thd", maxSeqLen };
  const { cpSize, layout, ok } = await resolveLayout(shards, locs, geom);
  let alignmentFailed = !ok;
  const out = Object.fromEntries(PER_TOKEN_FIELDS.map((f) => [f, null])) as Record<PerTokenField, NumArray | null>;
  for (const field of PER_TOKEN_FIELDS) {
    if (!fields.includes(field)) continue;
    const holders = locs.filter((l) => (shards[l.shard] as ShardSource).hasColumn(field));
    if (holders.length === 0) continue;
    const chunks = new Map<number, NumArray>();
    for (const h of holders) {
      const cpRank = layout.get(h.shard);
      if (cpRank === undefined || chunks.has(cpRank)) continue;
      const t = await (shards[h.shard] as ShardSource).rowArray(field, h.row);
      if (t !== null) chunks.set(cpRank, t);
      if (cpSize === 1) break;
    }
    if (cpSize === 1) {
      out[field] = chunks.values().next().value ?? null;
    } else if (chunks.size !== cpSize) {
      alignmentFailed = true;
    } else {
      out[field] = reassemble({ ...geom, cpSize }, chunks);
    }
  }
  for (const field of PER_TOKEN_FIELDS) {
    const v = out[field];
    if (v !== null && v.length !== responseLength) {
      out[field] = null;
      alignmentFailed = true;
    }
  }
  return {
    sampleIndex,
    rank: primary.rank ?? first.shard,
    responseLength,
    totalLength,
    reward,
    lossMask,
    truncated: truncatedRaw === undefined ? undefined : Boolean(toFloat(truncatedRaw)),
    rawReward: null,
    fields: out,
    alignmentFailed,
  };
}

const JOIN_CONCURRENCY = 16;

/** `Promise.all(items.map(fn))` with at most `limit` calls in flight; results in order. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Full join for the summary (2.1–2.4): every sample present in some shard gets a
 * TrainRow with its batch-global raw reward.
 */
export async function joinTrainRows<T = TrainRow>(
  samples: readonly { index: number | null }[],
  shards: readonly ShardSource[],
  reduce: (row: TrainRow) => T = (row) => row as unknown as T,
): Promise<Map<number, T>> {
  const batchPosition = new Map<number, number>();
  samples.forEach((s, i) => {
    if (s.index !== null) batchPosition.set(s.index, i);
  });
  const rows = new Map<number, T>();
  if (shards.length === 0) return rows;
  const locations = await indexLocations(shards, batchPosition);
  let rawReward: unknown[] | null = null;
  for (const src of shards) {
    if (!src.hasColumn("raw_reward")) continue;
    const rr = await src.columnValues("raw_reward");
    if (rr === null) continue;
    if (rr.length !== samples.length) {
      throw new Error(`raw_reward must be batch-global (expected ${samples.length} entries, got ${rr.length})`);
    }
    rawReward = rr;
  }
  // Rows are independent: overlap their positional reads (bounded, in index order).
  const entries = [...locations];
  const built = await mapBounded(entries, JOIN_CONCURRENCY, async ([si, locs]) => {
    const row = await buildTrainRow(si, shards, locs);
    if (rawReward !== null) row.rawReward = toFloat(rawReward[batchPosition.get(si) as number]);
    return reduce(row);
  });
  entries.forEach(([si], i) => rows.set(si, built[i] as T));
  return rows;
}
