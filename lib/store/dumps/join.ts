/**
 * The rollout ⋈ train join (docs/api.md 2): per-sample location index over the train
 * shards, TP/PP dedup (the lowest-ranked location is primary), length consistency
 * assertions, context-parallel layout (recorded `cp_rank`/`cp_size`, or the legacy probe
 * over `rollout_log_probs`), CP reassembly of the seven per-token fields and the
 * batch-global `raw_reward` lookup.
 *
 * It works over `ShardSource`, an abstraction of one `train_data/{rolloutId}_{rank}.pt` whose
 * tensors are materialised on demand, so the token point-read path reads only the
 * storages of one sample. Inconsistencies are plain Errors (HTTP 500); a missing required
 * column is a 404 like the reference's KeyError.
 */
import { notFound } from "@/lib/contracts/errors";
import { expectedWidth, reassemble, type CpGeometry } from "./cp";
import { mapBounded } from "./files";
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
  /** Entry `row` of a per-row tensor column as numbers (null when the entry is None). Read-only: it may share memory with cached storage bytes. */
  rowArray(col: string, row: number): Promise<NumArray | null>;
  /** Whole list/1-D column as plain JS values (for `raw_reward`, `sample_indices`). */
  columnValues(col: string): Promise<unknown[] | null>;
  /**
   * Optional batched I/O: fetch the data behind these row entries with few large reads
   * and keep it until `release()`. Purely an optimisation — `rowArray` must return the
   * same values with or without it.
   */
  prefetch?(requests: readonly RowRequest[]): Promise<void>;
  release?(): void;
  /** Optional: `scalar(col, row)` when answerable without I/O, else undefined. */
  peekScalar?(col: string, row: number): unknown;
  /** Optional: `rowArray(col, row)` when answerable without I/O, else undefined. */
  peekRowArray?(col: string, row: number): NumArray | null | undefined;
}

/** `src.scalar` without a microtask when the value is resident. */
function scalarOf(src: ShardSource, col: string, row: number): unknown {
  return src.peekScalar?.(col, row);
}

/** `src.rowArray` without a microtask when the data is resident. */
function rowArrayOf(src: ShardSource, col: string, row: number): NumArray | null | undefined {
  return src.peekRowArray?.(col, row);
}

/** One per-row tensor entry a join will read: `rollout_data[col][row]`. */
export interface RowRequest {
  col: string;
  row: number;
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

/** Recorded layout (2.4), or null when no location carries a `cp_rank` (legacy). */
function recordedLayout(shards: readonly ShardSource[], locs: readonly Location[]): CpLayout | null {
  const primary = shards[(locs[0] as Location).shard] as ShardSource;
  let layout: Map<number, number> | null = null;
  for (const l of locs) {
    const cpRank = (shards[l.shard] as ShardSource).cpRank;
    if (cpRank === null) continue;
    (layout ??= new Map()).set(l.shard, cpRank);
  }
  if (layout === null) return null;
  const cpSize = primary.cpSize ? primary.cpSize : 1;
  return { cpSize, layout, ok: new Set(layout.values()).size === cpSize };
}

async function resolveLayout(
  shards: readonly ShardSource[],
  locs: readonly Location[],
  geom: Omit<CpGeometry, "cpSize">,
): Promise<CpLayout> {
  const recorded = recordedLayout(shards, locs);
  if (recorded !== null) return recorded;
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
  // Every read first tries the source's no-I/O peek, so a row whose data was prefetched
  // is built without awaiting anything (the summary builds hundreds of rows).
  const first = locs[0];
  if (first === undefined) throw new Error(`sample ${sampleIndex} has no train location`);
  const primary = shards[first.shard] as ShardSource;
  for (const col of REQUIRED_TRAIN_COLUMNS) requireColumn(primary, col);
  const r = first.row;
  let v = scalarOf(primary, "response_lengths", r);
  const responseLength = toInt(v !== undefined ? v : await primary.scalar("response_lengths", r), "response_lengths");
  v = scalarOf(primary, "total_lengths", r);
  const totalLength = toInt(v !== undefined ? v : await primary.scalar("total_lengths", r), "total_lengths");
  for (let i = 1; i < locs.length; i++) {
    const l = locs[i] as Location;
    const other = shards[l.shard] as ShardSource;
    v = scalarOf(other, "response_lengths", l.row);
    const rl = toInt(v !== undefined ? v : await other.scalar("response_lengths", l.row), "response_lengths");
    v = scalarOf(other, "total_lengths", l.row);
    const tl = toInt(v !== undefined ? v : await other.scalar("total_lengths", l.row), "total_lengths");
    if (rl !== responseLength || tl !== totalLength) {
      throw new Error(
        `rank ${other.rank ?? l.shard} disagrees with rank ${primary.rank ?? first.shard} on sample ${sampleIndex} lengths`,
      );
    }
  }
  let mask = rowArrayOf(primary, "loss_masks", r);
  if (mask === undefined) mask = await primary.rowArray("loss_masks", r);
  const lossMask = mask ?? new Int32Array(0);
  let truncatedRaw: unknown = undefined;
  if (primary.hasColumn("truncated")) {
    v = scalarOf(primary, "truncated", r);
    truncatedRaw = v !== undefined ? v : await primary.scalar("truncated", r);
  }
  let maxSeqLen: number | null = null;
  if (primary.hasColumn("max_seq_lens")) {
    v = scalarOf(primary, "max_seq_lens", r);
    maxSeqLen = toFloat(v !== undefined ? v : await primary.scalar("max_seq_lens", r));
  }
  v = scalarOf(primary, "rewards", r);
  const reward = toFloat(v !== undefined ? v : await primary.scalar("rewards", r)) ?? NaN;

  const geom = { totalLength, responseLength, qkvFormat: primary.qkvFormat ?? "thd", maxSeqLen };
  const { cpSize, layout, ok } = recordedLayout(shards, locs) ?? (await resolveLayout(shards, locs, geom));
  let alignmentFailed = !ok;
  const out: Record<PerTokenField, NumArray | null> = {
    log_probs: null,
    rollout_log_probs: null,
    ref_log_probs: null,
    entropy: null,
    ref_entropy: null,
    advantages: null,
    returns: null,
  };
  for (const field of PER_TOKEN_FIELDS) {
    if (!fields.includes(field)) continue;
    let chunks: Map<number, NumArray> | null = null;
    let any = false;
    for (const h of locs) {
      const src = shards[h.shard] as ShardSource;
      if (!src.hasColumn(field)) continue;
      any = true;
      const cpRank = layout.get(h.shard);
      if (cpRank === undefined || chunks?.has(cpRank)) continue;
      let t = rowArrayOf(src, field, h.row);
      if (t === undefined) t = await src.rowArray(field, h.row);
      if (t !== null) (chunks ??= new Map()).set(cpRank, t);
      if (cpSize === 1) break;
    }
    if (!any) continue;
    if (cpSize === 1) {
      out[field] = chunks?.values().next().value ?? null;
    } else if ((chunks?.size ?? 0) !== cpSize) {
      alignmentFailed = true;
    } else {
      out[field] = reassemble({ ...geom, cpSize }, chunks as Map<number, NumArray>);
    }
  }
  for (const field of PER_TOKEN_FIELDS) {
    const f = out[field];
    if (f !== null && f.length !== responseLength) {
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

/**
 * The row entries `buildTrainRow` will read for one sample (same selection rules, no
 * I/O): the primary loss mask and, per per-token field, the first holder of each
 * cp_rank of the recorded layout. Legacy dumps (no `cp_rank`) add every holder's
 * `rollout_log_probs` (the probe) and the primary's fields; anything else the build
 * needs is still read lazily.
 */
export function planTrainRow(
  shards: readonly ShardSource[],
  locs: readonly Location[],
  fields: readonly PerTokenField[] = PER_TOKEN_FIELDS,
): { shard: number; req: RowRequest }[] {
  const first = locs[0];
  if (first === undefined) return [];
  const primary = shards[first.shard] as ShardSource;
  const out: { shard: number; req: RowRequest }[] = [{ shard: first.shard, req: { col: "loss_masks", row: first.row } }];
  const recorded = locs.some((l) => (shards[l.shard] as ShardSource).cpRank !== null);
  if (!recorded) {
    for (const l of locs) {
      if ((shards[l.shard] as ShardSource).hasColumn("rollout_log_probs")) out.push({ shard: l.shard, req: { col: "rollout_log_probs", row: l.row } });
    }
    for (const field of fields) {
      if (field !== "rollout_log_probs" && primary.hasColumn(field)) out.push({ shard: first.shard, req: { col: field, row: first.row } });
    }
    return out;
  }
  const cpSize = primary.cpSize ? primary.cpSize : 1;
  for (const field of PER_TOKEN_FIELDS) {
    if (!fields.includes(field)) continue;
    const seen = new Set<number>();
    for (const l of locs) {
      const src = shards[l.shard] as ShardSource;
      if (!src.hasColumn(field) || src.cpRank === null || seen.has(src.cpRank)) continue;
      seen.add(src.cpRank);
      out.push({ shard: l.shard, req: { col: field, row: l.row } });
      if (cpSize === 1) break;
    }
  }
  return out;
}

const JOIN_CONCURRENCY = 16;
/** Per-token bytes prefetched per batch of the full join (bounds its memory). */
const JOIN_BATCH_BYTES = 128 * 1024 * 1024;


/**
 * Full join for the summary (2.1–2.4): every sample present in some shard gets a
 * TrainRow with its batch-global raw reward.
 */
export async function joinTrainRows<T = TrainRow>(
  samples: readonly { index: number | null }[],
  shards: readonly ShardSource[],
  reduce: (row: TrainRow) => T = (row) => row as unknown as T,
  /** Background joins: `await pause()` every `every` rows (lets other work run). */
  pace?: { every: number; pause: () => Promise<void> },
  /** Per-token fields to read (default all seven; the drift join needs two). */
  fields: readonly PerTokenField[] = PER_TOKEN_FIELDS,
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
  const entries = [...locations];
  const build = async ([si, locs]: [number, Location[]]): Promise<T> => {
    const row = await buildTrainRow(si, shards, locs, fields);
    if (rawReward !== null) row.rawReward = toFloat(rawReward[batchPosition.get(si) as number]);
    return reduce(row);
  };
  const batched = shards.some((s) => s.prefetch !== undefined);
  if (!batched) {
    // Rows are independent: overlap their positional reads (bounded, in index order).
    const built = await mapBounded(entries, JOIN_CONCURRENCY, build);
    entries.forEach(([si], i) => rows.set(si, built[i] as T));
    return rows;
  }
  // Batched I/O: plan the row entries of a batch of samples, fetch them shard by shard
  // (all shards concurrently, few large reads each), reduce the rows, drop the bytes.
  const bytesPerToken = 4 * (1 + fields.length);
  let i = 0;
  while (i < entries.length) {
    const perShard = new Map<number, RowRequest[]>();
    let budget = 0;
    const start = i;
    while (i < entries.length && (i === start || budget < JOIN_BATCH_BYTES)) {
      const [, locs] = entries[i] as [number, Location[]];
      const first = locs[0] as Location;
      const rl = toFloat(await (shards[first.shard] as ShardSource).scalar("response_lengths", first.row));
      budget += Math.max(1, rl ?? 0) * bytesPerToken;
      for (const { shard, req } of planTrainRow(shards, locs, fields)) {
        let list = perShard.get(shard);
        if (!list) perShard.set(shard, (list = []));
        list.push(req);
      }
      i++;
    }
    try {
      await Promise.all([...perShard].map(([s, reqs]) => (shards[s] as ShardSource).prefetch?.(reqs) ?? Promise.resolve()));
      for (let k = start; k < i; k++) {
        const e = entries[k] as [number, Location[]];
        rows.set(e[0], await build(e));
        if (pace && (k + 1) % pace.every === 0) await pace.pause();
      }
    } finally {
      for (const s of perShard.keys()) (shards[s] as ShardSource).release?.();
    }
  }
  return rows;
}
