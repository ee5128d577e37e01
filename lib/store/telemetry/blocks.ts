/**
 * Parsed partition blocks, one per stream file, and the per-line decoders that fill them.
 *
 * Policy: a record must carry exactly the keys of its stream (docs/formats.md §0; engine_series
 * may omit `labels`) with the right JSON types. Anything else is a corrupt line: skipped
 * and counted, never fatal (the Python store raised instead; we keep serving the rest).
 * gpu_util and engine_series rows are stored as tick-grouped typed columns — rows that
 * share a timestamp (one sampler tick of a node, one scrape tick) share one ts slot — so
 * a row costs ~10 bytes; the other streams keep plain records.
 */
import { ENGINE_INFO_FIELDS, GPU_VALUE_RANGE, RECORD_FIELDS } from "@/lib/store/format";
import { CHUNK, Col, fitted, grown, Interner, MASK, SHIFT, type TypedArray } from "@/lib/store/telemetry/columns";
import type { Part } from "@/lib/store/telemetry/engine-parts";
import type { ScannedRows } from "@/lib/store/telemetry/gpu-wasm";
import {
  OPEN_T1,
  TRAJECTORY_KINDS,
  type DataBufferSample,
  type EngineInfo,
  type GpuProcessSample,
  type MetricsRecord,
  type PhaseEvent,
  type Scalar,
  type TopologySnapshot,
  type TrajectoryEvent,
} from "@/lib/store/telemetry/types";

/** Store-wide dictionaries shared by every block (ids are stable for the store's life). */
export class Dicts {
  readonly laneKeys = new Interner();
  readonly laneNode: string[] = [];
  readonly laneGpu: number[] = [];
  readonly metrics = new Interner();
  /** Engine series identity: addr + canonical labels (raw, dp_rank included). */
  readonly series = new Interner(0xffff);
  readonly seriesAddr: string[] = [];
  readonly seriesLabels: Record<string, string | null>[] = [];
  /** Names, nodes and roles of phase events. */
  readonly phaseStrings = new Interner(0xffffffff);

  laneId(node: string, gpu: number): number {
    const key = `${node}\u0000${gpu}`;
    const known = this.laneKeys.lookup(key);
    if (known !== undefined) return known;
    const id = this.laneKeys.id(key);
    this.laneNode[id] = node;
    this.laneGpu[id] = gpu;
    return id;
  }

  seriesId(addr: string, labels: Record<string, string | null>): number {
    const key = `${addr}\u0000${canonicalLabels(labels)}`;
    const known = this.series.lookup(key);
    if (known !== undefined) return known;
    const id = this.series.id(key);
    this.seriesAddr[id] = addr;
    this.seriesLabels[id] = labels;
    return id;
  }
}

/**
 * Python `json.dumps(labels, sort_keys=True)` with default separators — the sort key
 * of engine series parts (docs/api.md 8.6).
 */
export function canonicalLabels(labels: Record<string, unknown>): string {
  const keys = Object.keys(labels).sort(cmpStr);
  if (keys.length === 0) return "{}";
  return `{${keys.map((k) => `${JSON.stringify(k)}: ${JSON.stringify(labels[k] ?? null)}`).join(", ")}}`;
}

export function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Rows grouped into runs of identical `ts`; `sorted` tells whether group ts never decrease. */
export class TickColumns {
  readonly gTs = new Col(Float64Array);
  readonly gStart = new Col(Uint32Array);
  rows = 0;
  sorted = true;
  minTs = Infinity;
  maxTs = -Infinity;
  private lastTs = NaN;

  /** Append `n` rows stamped `ts[0..n)`, extending or opening tick groups. */
  protected appendTicks(ts: Float64Array, n: number): void {
    const gts = new Float64Array(n);
    const gst = new Uint32Array(n);
    let g = 0;
    let last = this.lastTs;
    let { minTs, maxTs, sorted } = this;
    for (let i = 0; i < n; i++) {
      const t = ts[i]!;
      if (t !== last) {
        if (t < last) sorted = false;
        gts[g] = t;
        gst[g] = this.rows + i;
        g++;
        last = t;
        if (t < minTs) minTs = t;
        if (t > maxTs) maxTs = t;
      }
    }
    this.gTs.append(gts, 0, g);
    this.gStart.append(gst, 0, g);
    this.rows += n;
    this.lastTs = last;
    this.minTs = minTs;
    this.maxTs = maxTs;
    this.sorted = sorted;
  }

  /**
   * Append `rows` rows whose tick groups were built elsewhere (a `GpuStage` as its rows
   * arrived, a worker's part of the same file, parse-pool.ts): `gTs`/`gStart` as
   * `appendTicks` built them from an empty start (`gStart` is overwritten), `sorted` whether
   * those group ts never decrease. The result is what `appendTicks` over the same rows
   * gives: a first group stamped like our last one continues it.
   */
  protected appendGroups(gTs: Float64Array, gStart: Uint32Array, rows: number, sorted: boolean, minTs: number, maxTs: number): void {
    const G = gTs.length;
    if (rows === 0 || G === 0) return;
    const skip = gTs[0] === this.lastTs ? 1 : 0;
    if (gTs[0]! < this.lastTs || !sorted) this.sorted = false;
    // In place: the caller's group starts are not read again (a stage is cleared, a part dropped).
    for (let g = skip; g < G; g++) gStart[g] = gStart[g]! + this.rows;
    this.gTs.append(gTs, skip, G);
    this.gStart.append(gStart, skip, G);
    this.rows += rows;
    this.lastTs = gTs[G - 1]!;
    if (minTs < this.minTs) this.minTs = minTs;
    if (maxTs > this.maxTs) this.maxTs = maxTs;
  }

  get groups(): number {
    return this.gTs.length;
  }

  /** ts of group g (direct chunk read: `Col.get` is shared by every element type). */
  groupTs(g: number): number {
    return this.gTs.chunks[g >>> SHIFT]![g & MASK]!;
  }

  groupStart(g: number): number {
    return this.gStart.chunks[g >>> SHIFT]![g & MASK]!;
  }

  groupEnd(g: number): number {
    return g + 1 < this.gTs.length ? this.groupStart(g + 1) : this.rows;
  }

  /** Groups [lo, hi) that may hold ts in [t0, t1]; callers still check each group's ts. */
  groupRange(t0: number | null, t1: number | null): [number, number] {
    const n = this.gTs.length;
    if (!this.sorted) return [0, n];
    let lo = 0;
    let hi = n;
    if (t0 !== null) {
      let a = 0;
      let b = n;
      while (a < b) {
        const m = (a + b) >>> 1;
        if (this.groupTs(m) < t0) a = m + 1;
        else b = m;
      }
      lo = a;
    }
    if (t1 !== null) {
      let a = lo;
      let b = n;
      while (a < b) {
        const m = (a + b) >>> 1;
        if (this.groupTs(m) <= t1) a = m + 1;
        else b = m;
      }
      hi = a;
    }
    return [lo, hi];
  }

  trimTicks(): void {
    this.gTs.trim();
    this.gStart.trim();
  }

  /** Restore group bookkeeping after columns were loaded from the binary cache. */
  protected restoreTicks(rows: number, sorted: boolean, minTs: number, maxTs: number): void {
    this.rows = rows;
    this.sorted = sorted;
    this.minTs = minTs;
    this.maxTs = maxTs;
    this.lastTs = this.gTs.length ? this.gTs.get(this.gTs.length - 1) : NaN;
  }
}

/**
 * Where a cache-backed block's mem and power columns come from until a query needs them:
 * util, lanes and ticks are what every whole-fleet view reads, and for a 1024-GPU hour they
 * are 12 of its 38 MB (#20).
 */
export interface GpuMagnitudeSource {
  /** The two columns from the cache entry the block came from (null: it went away or changed). */
  load(): Promise<{ mem: Int32Array; power: Int16Array } | null>;
  /** The partition's consumed bytes parsed again (the same rows, in the same order). */
  reparse(): Promise<GpuBlock>;
}

/** `GpuBlock.utilTotals()`: per lane id, Σ util and rows, over the block's first `rows` rows. */
export interface UtilTotals {
  rows: number;
  sum: Float64Array;
  count: Float64Array;
}

/**
 * `GpuBlock.utilPeaks()`: the block's tick groups in chunks of `groupsPerChunk` consecutive
 * groups (chunk c: groups [c·groupsPerChunk, (c + 1)·groupsPerChunk); a last partial chunk
 * has no entry), and per chunk each lane id's highest util. A whole-fleet view whose bucket
 * holds a whole chunk reads its `lanes` peaks instead of its rows.
 */
export interface UtilPeaks {
  rows: number;
  groupsPerChunk: number;
  /** Peaks per chunk: lane ids 0 … lanes − 1. */
  lanes: number;
  /** Smallest and largest tick of each chunk; NaN for a chunk with a tick that is not finite. */
  lo: Float64Array;
  hi: Float64Array;
  /** Chunk c, lane id l at c·lanes + l: the highest util, −1 where the lane has no row in the chunk. */
  peak: Int16Array;
}

/**
 * Rows per lane a peak chunk aims at. Measured on the bench runs, 2 / 4 / 8 rows a lane read
 * the 64-GPU util heatmap's window (1200 buckets over 4 h: 12 ticks a bucket) in 4.8 / 5.3 /
 * 6.9 ms (7.0 row by row) and the 1024-GPU fleet band in 50 / 52 / 64 ms (106 row by row);
 * at 4 the peaks take a sixth of the bytes of the lane and util columns they summarise (a
 * 1024-GPU hour: 1.8 of 11 MB, kept in memory and in the binary cache), at 2 a third.
 */
const PEAK_ROWS_PER_LANE = 4;

/** Build `UtilPeaks` over flat columns (`GpuBlock.flatUtil()`). */
export function buildUtilPeaks(gTs: Float64Array, gStart: Uint32Array, lane: Uint16Array, util: Uint8Array, rows: number, lanes: number): UtilPeaks {
  const G = gTs.length;
  const groupsPerChunk = Math.max(1, Math.round((PEAK_ROWS_PER_LANE * lanes * G) / Math.max(1, rows)));
  const C = Math.floor(G / groupsPerChunk);
  const lo = new Float64Array(C);
  const hi = new Float64Array(C);
  const peak = new Int16Array(C * lanes).fill(-1);
  for (let c = 0; c < C; c++) {
    const g0 = c * groupsPerChunk;
    const g1 = g0 + groupsPerChunk;
    let a = Infinity;
    let b = -Infinity;
    let finite = true;
    for (let g = g0; g < g1; g++) {
      const ts = gTs[g]!;
      if (!Number.isFinite(ts)) finite = false;
      if (ts < a) a = ts;
      if (ts > b) b = ts;
    }
    lo[c] = finite ? a : NaN;
    hi[c] = finite ? b : NaN;
    const base = c * lanes;
    const end = g1 < G ? gStart[g1]! : rows;
    for (let r = gStart[g0]!; r < end; r++) {
      const at = base + lane[r]!;
      const u = util[r]!;
      if (u > peak[at]!) peak[at] = u;
    }
  }
  return { rows, groupsPerChunk, lanes, lo, hi, peak };
}

/**
 * `GpuBlock.laneCounts()`: rows per lane id at chunk boundaries of the block's tick groups —
 * `prefix[c × lanes + l]` = the rows of lane id l in groups [0, c × groupsPerChunk), the
 * last boundary being all groups. A window's rows per lane are then one subtraction a lane
 * (`laneCountBound`: whole chunks around the window, so an upper bound), from a table of at
 * most 1/4 byte a row; the order of every row by lane (`laneRows`, 4 bytes a row) is only
 * built where a query reads a few lanes of a wide block.
 */
export interface LaneCounts {
  rows: number;
  groupsPerChunk: number;
  lanes: number;
  prefix: Uint32Array;
}

/** Rows a chunk of `LaneCounts` spans at least (and 16 a lane id: the table stays ≤ 1/4 byte a row). */
const LANE_COUNT_ROWS = 4096;

export function buildLaneCounts(gStart: Uint32Array, lane: Uint16Array, rows: number, lanes: number): LaneCounts {
  const G = gStart.length;
  const perGroup = G > 0 ? rows / G : 1;
  const groupsPerChunk = Math.max(1, Math.floor(Math.max(LANE_COUNT_ROWS, 16 * lanes) / Math.max(1, perGroup)));
  const C = Math.ceil(G / groupsPerChunk);
  const prefix = new Uint32Array((C + 1) * lanes);
  const running = new Uint32Array(lanes);
  for (let c = 0; c < C; c++) {
    prefix.set(running, c * lanes);
    const g1 = (c + 1) * groupsPerChunk;
    const end = g1 < G ? gStart[g1]! : rows;
    for (let r = gStart[c * groupsPerChunk]!; r < end; r++) running[lane[r]!]!++;
  }
  prefix.set(running, C * lanes);
  return { rows, groupsPerChunk, lanes, prefix };
}

/** At least the rows of lane id `id` in groups [g0, g1) (exact when both ends are chunk boundaries). */
export function laneCountBound(x: LaneCounts, id: number, g0: number, g1: number): number {
  if (g1 <= g0 || id >= x.lanes) return 0;
  const C = x.prefix.length / x.lanes - 1;
  const c0 = Math.floor(g0 / x.groupsPerChunk);
  const c1 = Math.min(C, Math.ceil(g1 / x.groupsPerChunk));
  return x.prefix[c1 * x.lanes + id]! - x.prefix[c0 * x.lanes + id]!;
}

/**
 * `GpuBlock.laneRows()`: the block's rows grouped by lane id — the rows of lane id l are
 * `order[offsets[l] … offsets[l + 1])`, ascending (file order). A query for some lanes reads
 * only their rows: a 32-lane window of a 64-GPU run half of them, of a 1024-GPU run 1/32.
 */
export interface LaneRows {
  rows: number;
  /** Lane ids 0 … offsets.length − 2. */
  offsets: Uint32Array;
  order: Uint32Array;
}

/** Build `LaneRows` over a flat lane column (a counting sort: two passes over the rows). */
export function buildLaneRows(lane: Uint16Array, rows: number, lanes: number): LaneRows {
  const offsets = new Uint32Array(lanes + 1);
  for (let r = 0; r < rows; r++) offsets[lane[r]! + 1]!++;
  for (let l = 0; l < lanes; l++) offsets[l + 1]! += offsets[l]!;
  const next = offsets.slice(0, lanes);
  const order = new Uint32Array(rows);
  for (let r = 0; r < rows; r++) order[next[lane[r]!]!++] = r;
  return { rows, offsets, order };
}

export class GpuBlock extends TickColumns {
  readonly lane = new Col(Uint16Array);
  readonly util = new Col(Uint8Array);
  readonly mem = new Col(Int32Array);
  readonly power = new Col(Int16Array);
  readonly lanes = new Set<number>();
  private magnitudes: GpuMagnitudeSource | null = null;
  private magnitudesLoading: Promise<void> | null = null;
  private utilTotalsKept: UtilTotals | null = null;
  private utilPeaksKept: UtilPeaks | null = null;
  private peakAsks = 0;
  private laneRowsKept: LaneRows | null = null;
  private laneCountsKept: LaneCounts | null = null;

  /** Whether `utilTotals()` is kept for every row the block holds now. */
  hasUtilTotals(): boolean {
    return this.utilTotalsKept?.rows === this.rows;
  }

  /**
   * Σ util and the row count per lane id (arrays indexed by lane id, up to the block's
   * highest) over all the block's rows; kept, and recomputed once rows were appended.
   * util is an integer column, so these sums are exact and any grouping of them adds up to
   * the same number a row-by-row sum gives (the outliers query relies on it).
   */
  utilTotals(): UtilTotals {
    const kept = this.utilTotalsKept;
    if (kept && kept.rows === this.rows) return kept;
    const size = this.laneSpan();
    const sum = new Float64Array(size);
    const count = new Float64Array(size);
    const { lane, util } = this;
    for (let c = 0; c < lane.chunks.length; c++) {
      const ln = lane.chunks[c]!;
      const ut = util.chunks[c]!;
      const n = Math.min(ln.length, this.rows - c * CHUNK);
      for (let o = 0; o < n; o++) {
        const id = ln[o]!;
        sum[id] = sum[id]! + ut[o]!;
        count[id] = count[id]! + 1;
      }
    }
    return (this.utilTotalsKept = { rows: this.rows, sum, count });
  }

  /**
   * `UtilPeaks` of a flat block (closed, or from the binary cache), kept. Built on the
   * second ask: a window read once — the first request for it, as a cold one is — is
   * answered row by row and does not pay for the extra pass; views asked again over the
   * same blocks (a following or panning dashboard) read the peaks. Null before that, and
   * for a block that still grows.
   */
  utilPeaks(): UtilPeaks | null {
    const kept = this.utilPeaksKept;
    if (kept && kept.rows === this.rows) return kept;
    const f = this.flatUtil();
    if (!f || this.peakAsks++ < 1) return null;
    return (this.utilPeaksKept = buildUtilPeaks(f.gTs, f.gStart, f.lane, f.util, this.rows, this.laneSpan()));
  }

  /** `LaneRows` of a flat block (closed, or from the binary cache), kept; null for a block that still grows. */
  laneRows(): LaneRows | null {
    const kept = this.laneRowsKept;
    if (kept && kept.rows === this.rows) return kept;
    const f = this.flatUtil();
    if (!f) return null;
    return (this.laneRowsKept = buildLaneRows(f.lane, this.rows, this.laneSpan()));
  }

  /** `LaneCounts` of a flat block (closed, or from the binary cache), kept; null for a block that still grows. */
  laneCounts(): LaneCounts | null {
    const kept = this.laneCountsKept;
    if (kept && kept.rows === this.rows) return kept;
    const f = this.flatUtil();
    if (!f) return null;
    return (this.laneCountsKept = buildLaneCounts(f.gStart, f.lane, this.rows, this.laneSpan()));
  }

  /** One past the block's highest lane id (0 for an empty block): the width of per-lane-id arrays. */
  laneSpan(): number {
    let span = 0;
    for (const l of this.lanes) if (l + 1 > span) span = l + 1;
    return span;
  }

  /**
   * Keep `p` as the block's util peaks (the binary cache's, built when its entry was
   * written) if it describes the block's rows: as many rows, whole chunks of the block's
   * tick groups, a peak for every lane id of the block.
   */
  keepUtilPeaks(p: UtilPeaks): void {
    const G = this.groups;
    const C = p.lo.length;
    const lanesOk = [...this.lanes].every((l) => l < p.lanes);
    if (p.rows !== this.rows || !(p.groupsPerChunk >= 1) || !Number.isInteger(p.groupsPerChunk) || C !== Math.floor(G / p.groupsPerChunk)) return;
    if (p.hi.length !== C || p.peak.length !== C * p.lanes || !lanesOk) return;
    this.utilPeaksKept = p;
  }

  /** Make mem and power resident (a no-op unless the block came from the binary cache). */
  ensureMagnitudes(): Promise<void> {
    const src = this.magnitudes;
    if (!src) return Promise.resolve();
    this.magnitudesLoading ??= (async () => {
      let cols = await src.load();
      if (!cols) {
        const fresh = await src.reparse();
        if (fresh.rows !== this.rows) throw new Error(`gpu_util partition changed under its cached columns (${fresh.rows} rows, ${this.rows} cached)`);
        cols = { mem: fresh.mem.toArray(), power: fresh.power.toArray() };
      }
      if (cols.mem.length !== this.rows || cols.power.length !== this.rows) throw new Error("cached gpu_util columns of unequal length");
      this.mem.load(cols.mem);
      this.power.load(cols.power);
      this.magnitudes = null;
    })().finally(() => (this.magnitudesLoading = null));
    return this.magnitudesLoading;
  }

  appendStage(st: GpuStage): void {
    const n = st.n;
    if (n === 0) return;
    this.appendGroups(st.gTs.subarray(0, st.g), st.gStart.subarray(0, st.g), n, st.sorted, st.minTs, st.maxTs);
    this.lane.append(st.lane, 0, n);
    this.util.append(st.util, 0, n);
    this.mem.append(st.mem, 0, n);
    this.power.append(st.power, 0, n);
    this.noteLanes(st.lane, n);
    st.clear();
  }

  /** Lane ids seen (one byte each), while rows are appended: `lanes` gets each id once, not a Set.add per row. */
  private laneSeen: Uint8Array | null = null;

  private noteLanes(lane: Uint16Array, n: number): void {
    let seen = this.laneSeen;
    if (!seen) {
      seen = this.laneSeen = new Uint8Array(0x10000);
      for (const l of this.lanes) seen[l] = 1;
    }
    for (let i = 0; i < n; i++) {
      const l = lane[i]!;
      if (seen[l] === 0) {
        seen[l] = 1;
        this.lanes.add(l);
      }
    }
  }

  trim(): void {
    for (const c of [this.gTs, this.gStart, this.lane, this.util, this.mem, this.power]) (c as Col<never>).compact();
    this.laneSeen = null;
  }

  /** The rows of a closed block (`trim()` first) as a part another block can append (`appendPart`). */
  toPart(): GpuPart {
    const f = this.flat();
    if (!f) throw new Error("GpuBlock.toPart() before trim()");
    return { rows: this.rows, sorted: this.sorted, minTs: this.minTs, maxTs: this.maxTs, lanes: [...this.lanes], ...f };
  }

  /**
   * Append a part parsed from the bytes that follow ours in the same file (parse-pool.ts),
   * its lane ids mapped through `laneOf` (the part's ids → this store's): the block then
   * holds what parsing those bytes here would have given it. The part's arrays are used up.
   */
  appendPart(p: GpuPart, laneOf: Uint16Array): void {
    if (p.rows === 0) return;
    // The part is this block's to use up: lane ids are mapped in place.
    const lane = p.lane;
    for (let i = 0; i < p.rows; i++) lane[i] = laneOf[lane[i]!]!;
    this.appendGroups(p.gTs, p.gStart, p.rows, p.sorted, p.minTs, p.maxTs);
    this.lane.append(lane, 0, p.rows);
    this.util.append(p.util);
    this.mem.append(p.mem);
    this.power.append(p.power);
    for (const l of p.lanes) {
      this.lanes.add(laneOf[l]!);
      if (this.laneSeen) this.laneSeen[laneOf[l]!] = 1;
    }
  }

  /** A parse has read `done` of its `total` bytes: reserve the row columns for the rest (`expectedRows`). */
  expect(done: number, total: number): void {
    const n = expectedRows(this.rows, done, total);
    for (const c of [this.lane, this.util, this.mem, this.power]) (c as Col<never>).reserve(n);
  }

  /** Ticks, lanes and util as contiguous arrays (a closed or cache-loaded block), else null. */
  flatUtil(): { gTs: Float64Array; gStart: Uint32Array; lane: Uint16Array; util: Uint8Array } | null {
    const { gTs, gStart, lane, util } = this;
    if (!gTs.flat || !gStart.flat || !lane.flat || !util.flat) return null;
    return { gTs: gTs.flat, gStart: gStart.flat, lane: lane.flat, util: util.flat };
  }

  /** All columns as contiguous arrays (a closed or cache-loaded block), else null; after `ensureMagnitudes()`. */
  flat(): { gTs: Float64Array; gStart: Uint32Array; lane: Uint16Array; util: Uint8Array; mem: Int32Array; power: Int16Array } | null {
    if (this.magnitudes) throw new Error("GpuBlock.flat() before ensureMagnitudes()");
    const { gTs, gStart, lane, util, mem, power } = this;
    if (!gTs.flat || !gStart.flat || !lane.flat || !util.flat || !mem.flat || !power.flat) return null;
    return { gTs: gTs.flat, gStart: gStart.flat, lane: lane.flat, util: util.flat, mem: mem.flat, power: power.flat };
  }

  byteLength(): number {
    const p = this.utilPeaksKept;
    const x = this.laneRowsKept;
    const k = this.laneCountsKept;
    return (
      (p ? p.peak.byteLength + p.lo.byteLength + p.hi.byteLength : 0) +
      (x ? x.offsets.byteLength + x.order.byteLength : 0) +
      (k ? k.prefix.byteLength : 0) +
      this.gTs.byteLength() +
      this.gStart.byteLength() +
      this.lane.byteLength() +
      this.util.byteLength() +
      this.mem.byteLength() +
      this.power.byteLength()
    );
  }

  /** A block from the binary cache: `mem`/`power` given, or loaded from `magnitudes` when first needed. */
  static restore(
    cols: Record<"gTs" | "gStart" | "lane" | "util", TypedArray> & Partial<Record<"mem" | "power", TypedArray>>,
    sorted: boolean,
    lanes: readonly number[],
    minTs: number,
    maxTs: number,
    magnitudes: GpuMagnitudeSource | null = null,
  ): GpuBlock {
    const b = new GpuBlock();
    b.gTs.load(cols.gTs);
    b.gStart.load(cols.gStart);
    b.lane.load(cols.lane);
    b.util.load(cols.util);
    if (cols.mem && cols.power) {
      b.mem.load(cols.mem);
      b.power.load(cols.power);
    } else if (magnitudes) b.magnitudes = magnitudes;
    else throw new Error("a cached gpu_util block needs its mem and power columns or a source for them");
    for (const l of lanes) b.lanes.add(l);
    b.restoreTicks(cols.lane.length, sorted, minTs, maxTs);
    return b;
  }
}

/** A closed `GpuBlock`'s rows as plain columns: what a parse worker hands back (`toPart`, `appendPart`). */
export interface GpuPart {
  rows: number;
  sorted: boolean;
  minTs: number;
  maxTs: number;
  /** Lane ids present (of the dicts that parsed the part). */
  lanes: number[];
  gTs: Float64Array;
  gStart: Uint32Array;
  lane: Uint16Array;
  util: Uint8Array;
  mem: Int32Array;
  power: Int16Array;
}

/** A `PhaseBlock`'s columns, exactly `n` rows long. */
export type PhaseColumns = Pick<PhaseBlock, "t0" | "t1" | "rank" | "name" | "node" | "role" | "gpuOff" | "gpus">;

/** What a `PhaseBlock` knows of its columns: stamp bounds, OPEN markers, and those of them no row of the block closes. */
export interface PhaseMeta {
  minT: number;
  maxT: number;
  open: Uint32Array;
  unmatched: number[];
}

/** A whole phase file's rows, its markers matched inside it: what a parse worker hands back (`PhaseBlock.toPart`). */
export type PhasePart = PhaseColumns & PhaseMeta;

const [UTIL_LO, UTIL_HI] = GPU_VALUE_RANGE.util;
const [MEM_LO, MEM_HI] = GPU_VALUE_RANGE.mem_mb;
const [POWER_LO, POWER_HI] = GPU_VALUE_RANGE.power_w;

/**
 * util, mem and power as their columns store them — each truncated toward zero, as a
 * typed array does — are the values given: util 0…255 (u8), mem in 32 bits, power in 16
 * (`GPU_VALUE_RANGE`). Anything else (300 % would be kept as 44 %, NaN as 0) makes the
 * line corrupt instead.
 */
export function gpuValuesFit(util: number, mem: number, power: number): boolean {
  const u = Math.trunc(util);
  const m = Math.trunc(mem);
  const p = Math.trunc(power);
  return u >= UTIL_LO && u <= UTIL_HI && m >= MEM_LO && m <= MEM_HI && p >= POWER_LO && p <= POWER_HI;
}

/** Rows parsed from one read chunk, in monomorphic typed arrays, before a bulk append. */
export class GpuStage {
  n = 0;
  lane: Uint16Array;
  util: Uint8Array;
  mem: Int32Array;
  power: Int16Array;
  /**
   * Tick groups, built as rows arrive (what `appendTicks` would build from an empty start):
   * `g` groups, group k stamped `gTs[k]` and starting at row `gStart[k]`.
   */
  g = 0;
  gTs: Float64Array;
  gStart: Uint32Array;
  sorted = true;
  minTs = Infinity;
  maxTs = -Infinity;
  /** The ts of the last row pushed (NaN: none): a row with another ts opens a tick group. */
  lastTs = NaN;
  constructor(cap = 4096) {
    this.lane = new Uint16Array(cap);
    this.util = new Uint8Array(cap);
    this.mem = new Int32Array(cap);
    this.power = new Int16Array(cap);
    this.gTs = new Float64Array(cap);
    this.gStart = new Uint32Array(cap);
  }
  push(ts: number, lane: number, util: number, mem: number, power: number): void {
    if (this.n === this.lane.length) this.grow();
    const i = this.n++;
    if (ts !== this.lastTs) this.openGroup(ts, i);
    this.lane[i] = lane;
    this.util[i] = util;
    this.mem[i] = mem;
    this.power[i] = power;
  }
  /**
   * Rows decoded elsewhere (gpu-wasm.ts), as if each had been `push`ed: the groups they
   * open are given (group k starts at their row `gStart[k]`; rows before the first
   * continue this stage's last group).
   */
  appendScanned(r: ScannedRows): void {
    const { n, g } = r;
    while (this.n + n > this.lane.length) this.grow();
    const at = this.n;
    this.lane.set(r.lane, at);
    this.util.set(r.util, at);
    this.mem.set(r.mem, at);
    this.power.set(r.power, at);
    for (let k = 0; k < g; k++) this.openGroup(r.gTs[k]!, at + r.gStart[k]!);
    this.n = at + n;
  }
  /** A tick group stamped `ts` from row `row` on (the arrays have room: groups never outnumber rows). */
  private openGroup(ts: number, row: number): void {
    if (ts < this.lastTs) this.sorted = false;
    const g = this.g++;
    this.gTs[g] = ts;
    this.gStart[g] = row;
    this.lastTs = ts;
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
  }
  /** Empty again (its arrays kept). */
  clear(): void {
    this.n = 0;
    this.g = 0;
    this.sorted = true;
    this.minTs = Infinity;
    this.maxTs = -Infinity;
    this.lastTs = NaN;
  }
  private grow(): void {
    // A group opens at most once a row, so the group arrays grow with the row arrays.
    const cap = this.lane.length * 2;
    this.lane = grown(this.lane, cap);
    this.util = grown(this.util, cap);
    this.mem = grown(this.mem, cap);
    this.power = grown(this.power, cap);
    this.gTs = grown(this.gTs, cap);
    this.gStart = grown(this.gStart, cap);
  }
}

/** One raw engine metric inside one partition. */
export class EngineMetricColumns extends TickColumns {
  readonly series = new Col(Uint16Array);
  readonly value = new Col(Float64Array);

  appendRows(ts: Float64Array, series: Uint16Array, value: Float64Array, n: number): void {
    this.appendTicks(ts, n);
    this.series.append(series, 0, n);
    this.value.append(value, 0, n);
  }

  trim(): void {
    this.gTs.compact();
    this.gStart.compact();
    this.series.compact();
    this.value.compact();
  }

  static restore(gTs: TypedArray, gStart: TypedArray, series: TypedArray, value: TypedArray, sorted: boolean, minTs: number, maxTs: number): EngineMetricColumns {
    const c = new EngineMetricColumns();
    c.gTs.load(gTs);
    c.gStart.load(gStart);
    c.series.load(series);
    c.value.load(value);
    c.restoreTicks(series.length, sorted, minTs, maxTs);
    return c;
  }

  byteLength(): number {
    return this.gTs.byteLength() + this.gStart.byteLength() + this.series.byteLength() + this.value.byteLength();
  }
}

export interface EngineCacheSource {
  /** metric id → rows and ts range (metrics with rows only) */
  readonly info: ReadonlyMap<number, { rows: number; minTs: number; maxTs: number }>;
  /** Raw columns of one metric, or null when the cache entry is no longer usable. */
  loadRaw(id: number): Promise<EngineMetricColumns | null>;
  loadFolded(id: number): Promise<Part[] | null>;
  /** The partition parsed from JSON again (fallback). */
  reparse(): Promise<EngineBlock>;
}

export class EngineBlock {
  /** metric id → columns */
  readonly metrics = new Map<number, EngineMetricColumns>();
  minTs = Infinity;
  maxTs = -Infinity;
  /** Results derived from this block's rows (engine parts); dropped on every append. */
  readonly derived = new Map<string, unknown>();
  /**
   * Cache-backed block (binary-cache.ts): metric columns are read on first use. Null for
   * a block parsed from JSON (everything resident).
   */
  source: EngineCacheSource | null = null;
  private loading = new Map<number, Promise<void>>();

  /** Ids of the metrics with rows in this block. */
  metricIds(): number[] {
    const ids = new Set<number>();
    for (const [id, c] of this.metrics) if (c.rows > 0) ids.add(id);
    if (this.source) for (const id of this.source.info.keys()) ids.add(id);
    return [...ids];
  }

  /** ts range of one metric's rows (null when it has none here). */
  metricRange(id: number): { minTs: number; maxTs: number } | null {
    const c = this.metrics.get(id);
    if (c && c.rows > 0) return c;
    return this.source?.info.get(id) ?? null;
  }

  /** Make the raw columns of `id` resident (a no-op for JSON-parsed blocks). */
  ensureRaw(id: number): Promise<void> {
    const src = this.source;
    if (!src || this.metrics.has(id) || !src.info.has(id)) return Promise.resolve();
    let p = this.loading.get(id);
    if (!p) {
      p = (async () => {
        const cols = await src.loadRaw(id);
        if (cols) {
          if (!this.metrics.has(id)) this.metrics.set(id, cols);
          return;
        }
        // cache entry gone or replaced by something else: parse the JSON once more
        const fresh = await src.reparse();
        for (const [k, v] of fresh.metrics) if (!this.metrics.has(k)) this.metrics.set(k, v);
        this.source = null;
      })().finally(() => this.loading.delete(id));
      this.loading.set(id, p);
    }
    return p;
  }

  /** Make every metric resident (before new rows are appended to a cache-backed block). */
  async ensureAll(): Promise<void> {
    const src = this.source;
    if (!src) return;
    await Promise.all([...src.info.keys()].map((id) => this.ensureRaw(id)));
    this.source = null;
  }

  /** Folded parts of `id` stored with a cache-backed block (null: compute from rows). */
  async loadFolded(id: number): Promise<Part[] | null> {
    const src = this.source;
    if (!src || !src.info.has(id)) return null;
    return src.loadFolded(id);
  }

  /** Distribute staged rows to their metric's columns (file order kept per metric). */
  appendStage(st: EngineStage): void {
    const n = st.n;
    if (n === 0) return;
    this.derived.clear();
    let maxMetric = 0;
    for (let i = 0; i < n; i++) if (st.metric[i]! > maxMetric) maxMetric = st.metric[i]!;
    const counts = new Uint32Array(maxMetric + 1);
    for (let i = 0; i < n; i++) counts[st.metric[i]!]!++;
    const offsets = new Uint32Array(maxMetric + 2);
    for (let m = 0; m <= maxMetric; m++) offsets[m + 1] = offsets[m]! + counts[m]!;
    const cursor = offsets.slice(0, maxMetric + 1);
    const ts = new Float64Array(n);
    const series = new Uint16Array(n);
    const value = new Float64Array(n);
    let { minTs, maxTs } = this;
    for (let i = 0; i < n; i++) {
      const k = cursor[st.metric[i]!]!++;
      const t = st.ts[i]!;
      ts[k] = t;
      series[k] = st.series[i]!;
      value[k] = st.value[i]!;
      if (t < minTs) minTs = t;
      if (t > maxTs) maxTs = t;
    }
    this.minTs = minTs;
    this.maxTs = maxTs;
    for (let m = 0; m <= maxMetric; m++) {
      const c = counts[m]!;
      if (c === 0) continue;
      let cols = this.metrics.get(m);
      if (!cols) this.metrics.set(m, (cols = new EngineMetricColumns()));
      const o = offsets[m]!;
      cols.appendRows(ts.subarray(o, o + c), series.subarray(o, o + c), value.subarray(o, o + c), c);
    }
    st.n = 0;
  }

  trim(): void {
    for (const c of this.metrics.values()) c.trim();
  }

  byteLength(): number {
    let n = 0;
    for (const c of this.metrics.values()) n += c.byteLength();
    return n;
  }
}

export class EngineStage {
  n = 0;
  metric = new Uint32Array(4096);
  ts = new Float64Array(4096);
  series = new Uint32Array(4096);
  value = new Float64Array(4096);
  push(metric: number, ts: number, series: number, value: number): void {
    if (this.n === this.ts.length) {
      const cap = this.n * 2;
      const m = new Uint32Array(cap);
      m.set(this.metric);
      this.metric = m;
      const t = new Float64Array(cap);
      t.set(this.ts);
      this.ts = t;
      const s = new Uint32Array(cap);
      s.set(this.series);
      this.series = s;
      const v = new Float64Array(cap);
      v.set(this.value);
      this.value = v;
    }
    const i = this.n++;
    this.metric[i] = metric;
    this.ts[i] = ts;
    this.series[i] = series;
    this.value[i] = value;
  }
}

export class RecordBlock<R> {
  readonly rows: R[] = [];
}

/**
 * Rows a file of `total` bytes will hold when `done` of them held `rows`: a little over
 * the proportion (2 % + 256), so uniform lines never make a column regrow at its end.
 */
export function expectedRows(rows: number, done: number, total: number): number {
  return done > 0 && total > done ? Math.ceil((rows * total) / done * 1.02) + 256 : rows;
}

/** `PhaseBlock.unmatchedByRuns`: markers per run of one (name, t0), at the least, on average. */
const RUN_MIN = 8;
/** Ranks a marker may carry for `unmatchedByRuns` (its tables hold at most 16 slots a marker in all, besides). */
const RANKS_MAX = 1 << 20;
/** A key's first rank table (grown to the largest rank seen). */
const RANK_TABLE = 64;

/** Bits of one float64 (hash keys). */
const F64 = new Float64Array(1);
const F64_WORDS = new Uint32Array(F64.buffer);

/**
 * Phase events as columns: numbers in typed arrays (rank and GPU indices as float64, so
 * any JSON integer survives exactly), strings (name, node, role) as ids of
 * the store-wide `Dicts.phaseStrings`, GPU lists flattened (`gpuOff[i]..gpuOff[i+1]`).
 * `rows` materialises plain records on demand (cached until the next append).
 */
export class PhaseBlock {
  n = 0;
  t0: Float64Array;
  t1: Float64Array;
  rank: Float64Array;
  name: Uint32Array;
  node: Uint32Array;
  role: Uint32Array;
  /** GPU list of row i: `gpus[gpuOff[i] .. gpuOff[i + 1])` */
  gpuOff: Uint32Array;
  gpus: Float64Array;
  /** Smallest / largest stamp of the block (t0 of every row, t1 of closed rows). */
  minT = Infinity;
  maxT = -Infinity;
  /**
   * Indices of OPEN markers (t1 == -1), ascending: `openIdx[0 .. openN)`, grown by doubling
   * while the block is parsed; the cache's own array once restored (converting it cost 35 ms
   * for an hour of a 1024-GPU run's 150 k markers — a fleet overview's first request read
   * five such hours). Half of a phase hour's rows are markers: as a typed column they take
   * 4 bytes each instead of a number[]'s 8, and 350 k rows pushed took 60 instead of 88 ms
   * in a micro-run (#20; whole-hour reads moved within noise).
   */
  private openIdx: Uint32Array = new Uint32Array(0);
  private openN = 0;
  get open(): Uint32Array {
    return this.openN === this.openIdx.length ? this.openIdx : this.openIdx.subarray(0, this.openN);
  }
  /** Bytes of the columns (for the stream's byte budget). */
  byteLength(): number {
    const cols = [this.t0, this.t1, this.rank, this.name, this.node, this.role, this.gpuOff, this.gpus];
    let n = this.openIdx.byteLength;
    for (const c of cols) n += c.byteLength;
    return n;
  }
  private rowsCache: PhaseEvent[] | null = null;
  private unmatchedCache: number[] | null = null;

  constructor(
    readonly strings: Interner,
    cap = 256,
  ) {
    this.t0 = new Float64Array(cap);
    this.t1 = new Float64Array(cap);
    this.rank = new Float64Array(cap);
    this.name = new Uint32Array(cap);
    this.node = new Uint32Array(cap);
    this.role = new Uint32Array(cap);
    this.gpuOff = new Uint32Array(cap + 1);
    this.gpus = new Float64Array(cap);
  }

  /** Room for `rows` rows and `gpus` GPU entries: at least doubled, or exactly that (`exact`). */
  private grow(rows: number, gpus: number, exact = false): void {
    if (rows > this.t0.length) this.eachRowColumn(grown, exact ? rows : Math.max(rows, this.t0.length * 2));
    if (gpus > this.gpus.length) this.gpus = grown(this.gpus, exact ? gpus : Math.max(gpus, this.gpus.length * 2));
  }

  /** Every per-row column replaced by `f(column, rows)` (`gpuOff` has one slot more). */
  private eachRowColumn(f: <A extends TypedArray>(a: A, len: number) => A, rows: number): void {
    this.t0 = f(this.t0, rows);
    this.t1 = f(this.t1, rows);
    this.rank = f(this.rank, rows);
    this.name = f(this.name, rows);
    this.node = f(this.node, rows);
    this.role = f(this.role, rows);
    this.gpuOff = f(this.gpuOff, rows + 1);
  }

  /** A parse has read `done` of its `total` bytes: size the columns for the rest (`expectedRows`). */
  expect(done: number, total: number): void {
    this.grow(expectedRows(this.n, done, total), expectedRows(this.gpuOff[this.n]!, done, total), true);
  }

  /** Append one event given by ids (hot path of the line scanner). */
  push(name: number, t0: number, t1: number, node: number, gpus: ArrayLike<number>, gpuFrom: number, gpuTo: number, rank: number, role: number): void {
    const i = this.n;
    const g0 = this.gpuOff[i]!;
    const ng = gpuTo - gpuFrom;
    if (i + 1 > this.t0.length || g0 + ng > this.gpus.length) this.grow(i + 1, g0 + ng);
    this.t0[i] = t0;
    this.t1[i] = t1;
    this.rank[i] = rank;
    this.name[i] = name;
    this.node[i] = node;
    this.role[i] = role;
    for (let k = 0; k < ng; k++) this.gpus[g0 + k] = gpus[gpuFrom + k]!;
    this.gpuOff[i + 1] = g0 + ng;
    if (t1 === OPEN_T1) {
      // a restored block is never appended to
      if (this.openN === this.openIdx.length) this.openIdx = grown(this.openIdx, Math.max(64, this.openN * 2));
      this.openIdx[this.openN++] = i;
    } else if (t1 > this.maxT) this.maxT = t1;
    if (t0 < this.minT) this.minT = t0;
    if (t0 > this.maxT) this.maxT = t0;
    this.n = i + 1;
    this.rowsCache = null;
    this.unmatchedCache = null;
  }

  add(ev: PhaseEvent): void {
    const s = this.strings;
    this.push(s.id(ev.name), ev.t0, ev.t1, s.id(ev.node), ev.gpus, 0, ev.gpus.length, ev.rank, s.id(ev.role));
  }

  str(id: number): string {
    return this.strings.values[id]!;
  }

  /** Plain records (materialised on first use). */
  get rows(): readonly PhaseEvent[] {
    if (this.rowsCache) return this.rowsCache;
    const out = new Array<PhaseEvent>(this.n);
    for (let i = 0; i < this.n; i++) out[i] = this.event(i);
    return (this.rowsCache = out);
  }

  event(i: number): PhaseEvent {
    return {
      name: this.str(this.name[i]!),
      t0: this.t0[i]!,
      t1: this.t1[i]!,
      node: this.str(this.node[i]!),
      gpus: Array.from(this.gpus.subarray(this.gpuOff[i], this.gpuOff[i + 1])),
      rank: this.rank[i]!,
      role: this.str(this.role[i]!),
    };
  }

  /** OPEN markers without a closed twin — same (node, rank, name, t0) — inside this block. */
  localUnmatched(): readonly number[] {
    if (this.unmatchedCache) return this.unmatchedCache;
    const byRuns = this.unmatchedByRuns();
    if (byRuns) return (this.unmatchedCache = byRuns);
    const out: number[] = [];
    const open = this.open;
    if (open.length > 0) {
      // An open-addressing table of the markers by (t0, node, rank, name): every rank of a
      // step opens its phase at the same t0, so grouping by t0 alone left thousands of
      // candidates per closed row (a 1024-GPU hour: 9 s); a Map of float keys and one list
      // per t0 was ~40 ns a row. Equal tuples hash equally and every candidate is still
      // compared field by field; t0 compares as Map keys did (−0 is 0, NaN is NaN).
      const { t0, t1, node, rank, name } = this;
      const hash = (k: number): number => {
        const t = t0[k]!;
        F64[0] = t === t ? t + 0 : NaN;
        let h = Math.imul(F64_WORDS[0]! ^ Math.imul(F64_WORDS[1]!, 0x9e3779b1), 0x85ebca77);
        h = Math.imul(h ^ node[k]!, 0xc2b2ae3d) ^ Math.imul(name[k]! + 1, 0x27d4eb2f);
        h ^= Math.imul(rank[k]! | 0, 0x165667b1);
        return (h ^ (h >>> 15)) >>> 0;
      };
      let cap = 16;
      while (cap < open.length * 2) cap *= 2;
      const mask = cap - 1;
      const slots = new Int32Array(cap).fill(-1);
      for (const i of open) {
        let s = hash(i) & mask;
        while (slots[s] !== -1) s = (s + 1) & mask;
        slots[s] = i;
      }
      const matched = new Uint8Array(this.n);
      for (let j = 0; j < this.n; j++) {
        if (t1[j] === OPEN_T1) continue;
        const tj = t0[j]!;
        for (let s = hash(j) & mask, i = slots[s]!; i !== -1; s = (s + 1) & mask, i = slots[s]!) {
          const ti = t0[i]!;
          if ((ti === tj || (ti !== ti && tj !== tj)) && node[i] === node[j] && rank[i] === rank[j] && name[i] === name[j]) matched[i] = 1;
        }
      }
      for (const i of open) if (!matched[i]) out.push(i);
    }
    return (this.unmatchedCache = out);
  }

  /**
   * The rows of a whole file a parse worker read (`trim()` first), with its OPEN markers
   * already matched inside it: what an empty block takes whole (`adoptPart`).
   */
  toPart(): PhasePart {
    const { t0, t1, rank, name, node, role, gpuOff, gpus, minT, maxT } = this;
    return { t0, t1, rank, name, node, role, gpuOff, gpus, minT, maxT, open: this.open, unmatched: [...this.localUnmatched()] };
  }

  /**
   * Take a part parsed from this (empty) block's file elsewhere (parse-pool.ts), its string
   * ids mapped through `idOf` (the part's ids → this block's `strings`): the block then holds
   * what parsing the file here would have given it. The part's arrays are used up.
   */
  adoptPart(p: PhasePart, idOf: Uint32Array): void {
    if (this.n !== 0) throw new Error("PhaseBlock.adoptPart() on a block that has rows");
    for (const col of [p.name, p.node, p.role]) for (let i = 0; i < col.length; i++) col[i] = idOf[col[i]!]!;
    this.install(p, p);
  }

  /** Take whole columns (ids already this block's) and what is known of them. */
  private install(cols: PhaseColumns, meta: PhaseMeta): void {
    this.t0 = cols.t0;
    this.t1 = cols.t1;
    this.rank = cols.rank;
    this.name = cols.name;
    this.node = cols.node;
    this.role = cols.role;
    this.gpuOff = cols.gpuOff;
    this.gpus = cols.gpus;
    this.n = cols.t0.length;
    this.minT = meta.minT;
    this.maxT = meta.maxT;
    this.openIdx = meta.open;
    this.openN = meta.open.length;
    this.rowsCache = null;
    this.unmatchedCache = meta.unmatched;
  }

  /**
   * `localUnmatched` for a block written as a fleet writes it, or null (then the general
   * table above answers): every rank of a step opens its phase at one t0, so markers and
   * closings come in runs of one (name, t0). Per run one lookup of that key; within it a
   * marker is found by its rank in a table, and its node compared. The general table costs a
   * hash and a cache miss on four columns per row (66 ns a row, 0.56 s for a 1024-GPU
   * day); this reads the node of a marker in the same run (that day: 0.22 s, one thread).
   * Null where it cannot be exact
   * or cheap: a rank that is not an integer from −1 up in a marker, two markers of
   * one key with the same rank, markers in runs shorter than RUN_MIN on average, or rank
   * tables of more than 16 slots a marker.
   */
  private unmatchedByRuns(): number[] | null {
    const open = this.open;
    const { t0, t1, rank, name, node } = this;
    const n = this.n;
    if (open.length === 0) return [];
    // (name, t0) → rank → marker row + 1 (0: none); t0 as Map keys compare (−0 is 0, NaN is NaN), like the table's
    const keys = new Map<number, Map<number, Int32Array>>();
    let runs = 0;
    let byName: Map<number, Int32Array> | undefined;
    let table: Int32Array | undefined;
    // rank tables are sized by the largest rank of their key: bounded by the markers' count
    let slots = 0;
    const slotsMax = 16 * open.length + (1 << 16);
    for (let k = 0; k < open.length; k++) {
      const i = open[k]!;
      const r = rank[i]! + 1; // the rollout manager's rank is −1
      if (!(r >= 0 && r < RANKS_MAX && (r | 0) === r)) return null;
      if (k === 0 || name[i] !== name[open[k - 1]!] || !Object.is(t0[i]! + 0, t0[open[k - 1]!]! + 0)) {
        if (++runs * RUN_MIN > open.length) return null;
        byName = keys.get(t0[i]!);
        if (!byName) keys.set(t0[i]!, (byName = new Map<number, Int32Array>()));
        table = byName.get(name[i]!);
        if (!table) {
          if ((slots += RANK_TABLE) > slotsMax) return null;
          byName.set(name[i]!, (table = new Int32Array(RANK_TABLE)));
        }
      }
      if (r >= table!.length) {
        const size = Math.max(r + 1, table!.length * 2);
        if ((slots += size - table!.length) > slotsMax) return null;
        const grown = new Int32Array(size);
        grown.set(table!);
        byName!.set(name[i]!, (table = grown));
      }
      if (table![r] !== 0) return null;
      table![r] = i + 1;
    }
    // Closings are answered run by run however short their runs (two Map lookups a run:
    // at worst about what the general table costs a row).
    const matched = new Uint8Array(n);
    table = undefined;
    let prev = -1;
    for (let j = 0; j < n; j++) {
      if (t1[j] === OPEN_T1) continue;
      if (prev < 0 || name[j] !== name[prev] || !Object.is(t0[j]! + 0, t0[prev]! + 0)) {
        table = keys.get(t0[j]!)?.get(name[j]!);
      }
      prev = j;
      if (!table) continue;
      const r = rank[j]! + 1;
      if (!(r >= 0 && r < table.length && (r | 0) === r)) continue; // no marker has that rank
      const i = table[r]! - 1;
      if (i >= 0 && node[i] === node[j]) matched[i] = 1;
    }
    const out: number[] = [];
    for (const i of open) if (!matched[i]) out.push(i);
    return out;
  }

  /** Drop spare capacity (closed partition). */
  trim(): void {
    const n = this.n;
    if (this.t0.length === n) return;
    // Sized by `expect`: up to 1/16 spare room is kept (views, no copy); more is copied away.
    this.eachRowColumn(fitted, n);
    this.gpus = fitted(this.gpus, this.gpuOff[n]!);
    this.openIdx = fitted(this.openIdx, this.openN);
  }

  /** Columns restored from the binary cache (ids already mapped to `strings`). */
  static restore(strings: Interner, cols: PhaseColumns, meta: PhaseMeta): PhaseBlock {
    const b = new PhaseBlock(strings, 0);
    b.install(cols, meta);
    return b;
  }
}

export class TimedBlock<R extends { ts: number }> extends RecordBlock<R> {
  minTs = Infinity;
  maxTs = -Infinity;
  add(r: R): void {
    if (r.ts < this.minTs) this.minTs = r.ts;
    if (r.ts > this.maxTs) this.maxTs = r.ts;
    this.rows.push(r);
  }
}

// ---------------------------------------------------------------------------------------
// record validation (exact key sets, docs/formats.md §4)

// The read-side decoders: the key sets are the format's (lib/store/format/records.ts);
// the value checks are deliberately looser than the writer's schema (any role string,
// any number), because a reader must show whatever an older or foreign writer left.
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === "number";
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isStr = (v: unknown): v is string => typeof v === "string";

function hasExactKeys(o: Obj, keys: readonly string[], optional: readonly string[] = []): boolean {
  let n = 0;
  for (const k in o) {
    if (keys.includes(k)) n++;
    else if (!optional.includes(k)) return false;
  }
  return n === keys.length;
}

const METRICS_KEYS = RECORD_FIELDS.metrics;
export function decodeMetrics(o: unknown): MetricsRecord | null {
  if (!isObj(o) || !hasExactKeys(o, METRICS_KEYS)) return null;
  const { ts, step_key, step, metrics } = o;
  if (!isNum(ts) || !(step_key === null || isStr(step_key)) || !(step === null || isNum(step)) || !isObj(metrics))
    return null;
  return { ts, step_key, step, metrics: metrics as Record<string, Scalar> };
}

const PHASE_KEYS = RECORD_FIELDS.phases;
export function decodePhase(o: unknown): PhaseEvent | null {
  if (!isObj(o) || !hasExactKeys(o, PHASE_KEYS)) return null;
  const { name, t0, t1, node, gpus, rank, role } = o;
  if (!isStr(name) || !isNum(t0) || !isNum(t1) || !isStr(node) || !isInt(rank) || !isStr(role)) return null;
  if (!Array.isArray(gpus) || !gpus.every(isInt)) return null;
  return { name, t0, t1, node, gpus: gpus, rank, role };
}

const TOPO_KEYS = RECORD_FIELDS.topology;
const ENGINE_KEYS = ENGINE_INFO_FIELDS;
export function decodeTopology(o: unknown): TopologySnapshot | null {
  if (!isObj(o) || !hasExactKeys(o, TOPO_KEYS) || !isNum(o.ts) || !Array.isArray(o.engines)) return null;
  for (const e of o.engines as unknown[]) {
    if (!isObj(e) || !hasExactKeys(e, ENGINE_KEYS) || !isStr(e.addr) || !Array.isArray(e.gpus)) return null;
    for (const g of e.gpus as unknown[]) {
      if (!Array.isArray(g) || g.length !== 2 || !isStr(g[0]) || !isInt(g[1])) return null;
    }
  }
  return { ts: o.ts, engines: o.engines as EngineInfo[] };
}

const TRAJ_KEYS = RECORD_FIELDS.trajectories;
const KINDS = new Set<string>(TRAJECTORY_KINDS);
export function decodeTrajectory(o: unknown): TrajectoryEvent | null {
  if (!isObj(o) || !hasExactKeys(o, TRAJ_KEYS)) return null;
  const { ts, kind, sample_index, group_index, turn, weight_version, detail } = o;
  if (!isNum(ts) || !isStr(kind) || !KINDS.has(kind) || !isInt(sample_index) || !isInt(group_index) || !isInt(turn))
    return null;
  if (!isStr(weight_version) || !isStr(detail)) return null;
  return { ts, kind: kind as TrajectoryEvent["kind"], sample_index, group_index, turn, weight_version, detail };
}

const PROC_KEYS = RECORD_FIELDS.gpu_processes;
export function decodeGpuProcess(o: unknown): GpuProcessSample | null {
  if (!isObj(o) || !hasExactKeys(o, PROC_KEYS)) return null;
  const { ts, node, gpu, pid, name, mem_mb } = o;
  if (!isNum(ts) || !isStr(node) || !isInt(gpu) || !isInt(pid) || !isStr(name) || !isNum(mem_mb)) return null;
  return { ts, node, gpu, pid, name, mem_mb };
}

const BUFFER_KEYS = RECORD_FIELDS.data_buffer;
export function decodeDataBuffer(o: unknown): DataBufferSample | null {
  if (!isObj(o) || !hasExactKeys(o, BUFFER_KEYS) || !isNum(o.ts) || !isNum(o.length)) return null;
  return { ts: o.ts, length: o.length };
}

const GPU_KEYS = RECORD_FIELDS.gpu_util;
/** Generic (slow-path) gpu_util decoder; returns false for a corrupt record. */
export function addGpuRecord(block: GpuStage, dicts: Dicts, o: unknown): boolean {
  if (!isObj(o) || !hasExactKeys(o, GPU_KEYS)) return false;
  const { ts, node, gpu, util, mem_mb, power_w } = o;
  if (!isNum(ts) || !Number.isFinite(ts) || !isStr(node) || !isInt(gpu) || !isNum(util) || !isNum(mem_mb) || !isNum(power_w))
    return false;
  if (!gpuValuesFit(util, mem_mb, power_w)) return false;
  block.push(ts, dicts.laneId(node, gpu), util, mem_mb, power_w);
  return true;
}

// `labels` may be absent in engine rows written before it existed.
const ENGINE_ROW_KEYS = RECORD_FIELDS.engine_series.filter((k) => k !== "labels");
export function addEngineRecord(block: EngineStage, dicts: Dicts, o: unknown): boolean {
  if (!isObj(o) || !hasExactKeys(o, ENGINE_ROW_KEYS, ["labels"])) return false;
  const { ts, addr, metric, value } = o;
  if (!isNum(ts) || !Number.isFinite(ts) || !isStr(addr) || !isStr(metric) || !isNum(value)) return false;
  const raw = o.labels ?? {};
  if (!isObj(raw)) return false;
  let labels: Record<string, string | null> = raw as Record<string, string | null>;
  for (const k in raw) {
    const v = raw[k];
    if (v !== null && typeof v !== "string") {
      labels = Object.fromEntries(Object.entries(raw).map(([kk, vv]) => [kk, vv === null ? null : typeof vv === "string" ? vv : JSON.stringify(vv)]));
      break;
    }
  }
  block.push(dicts.metrics.id(metric), ts, dicts.seriesId(addr, labels), value);
  return true;
}
