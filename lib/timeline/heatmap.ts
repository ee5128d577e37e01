/**
 * Heatmap ("rank carpet", docs/api.md 8.9) and fleet overview (8.10). Magnitude cells take the
 * MAX of the bucket's samples (activity must not average away); phase cells paint idle
 * phases first so any active phase wins a shared bucket; lifecycle rows are samples.
 */
import { timeSlicer } from "@/lib/timeline/slice";
import { badRequest } from "@/lib/contracts/errors";
import { forEachTickRun, maxUtilByBucket, type GpuBlock, type MetricStore } from "@/lib/store/telemetry";
import { packedNumbers } from "@/lib/timeline/downsample";
import { checkResolvedWindow, checkXBuckets } from "@/lib/timeline/window";
import { laneKey, type LaneSet } from "@/lib/timeline/lanes";
import { findIntervals, type FoundIntervals, type IntervalPool, type LaneIntervals } from "@/lib/timeline/phases";
import { pyRound } from "@/lib/timeline/pyformat";
import { trajectoryLanes } from "@/lib/timeline/trajectories";

export const HEATMAP_MAGNITUDE_FIELDS = ["util", "mem_mb", "power_w"] as const;
export const IDLE_PHASES: ReadonlySet<string> = new Set(["initialize", "train_wait", "sleep"]);
export const LIFECYCLE_MAX_ROWS = 1024;
export const LIFECYCLE_PALETTE = ["", "queue", "generating", "tool_wait"];

export type HeatmapRow =
  | { node: string; gpu: number; index: number; roles: string[] }
  | { sample_index: number; group_index: number };

export interface Heatmap {
  rows: HeatmapRow[];
  rows_total?: number;
  x_buckets: number;
  t0: number;
  t1: number;
  metric: string;
  scale: { max: number } | null;
  palette: string[] | null;
  /** rows × x_buckets, row-major */
  values: Uint8Array;
}

/** Header of the binary frame, key order as the reference. */
export function heatmapHeader(h: Heatmap): Record<string, unknown> {
  const { rows, rows_total, x_buckets, t0, t1, metric, scale, palette } = h;
  return rows_total === undefined
    ? { rows, x_buckets, t0, t1, metric, scale, palette }
    : { rows, rows_total, x_buckets, t0, t1, metric, scale, palette };
}

function bucketFn(t0: number, t1: number, X: number): (ts: number) => number {
  const span = t1 - t0;
  return (ts) => Math.min(X - 1, Math.max(0, Math.trunc(((ts - t0) / span) * X)));
}

export async function heatmap(
  store: MetricStore,
  metric: string,
  t0q: number | null,
  t1q: number | null,
  X: number,
  selection: LaneSet | null,
): Promise<Heatmap> {
  checkXBuckets(X);
  const win = await heatmapWindow(store, t0q, t1q);
  if (win === null)
    return { rows: [], x_buckets: X, t0: 0.0, t1: 0.0, metric, values: new Uint8Array(0), scale: null, palette: null };
  const [t0, t1] = win;
  const isMagnitude = (HEATMAP_MAGNITUDE_FIELDS as readonly string[]).includes(metric);
  if (!isMagnitude && metric !== "phase" && metric !== "lifecycle") throw badRequest(`unknown heatmap metric '${metric}'`);
  checkResolvedWindow(t0, t1, t0q !== null, t1q !== null);
  const bucket = bucketFn(t0, t1, X);

  if (metric === "lifecycle") return lifecycle(store, t0, t1, X, bucket);

  const lanes = await store.laneIndex();
  const rowLanes = selection ? lanes.filter((l) => selection.has(l.node, l.gpu)) : lanes;
  const rows = rowLanes.map((l) => ({ node: l.node, gpu: l.gpu, index: l.index, roles: l.roles }));
  const R = rows.length;
  const values = new Uint8Array(R * X);

  if (metric === "phase") {
    const { names } = await paintPhases(store, values, rows, t0, t1, X, selection);
    return { rows, x_buckets: X, t0, t1, metric, scale: null, palette: ["", ...names], values };
  }

  // magnitude
  const field = metric as (typeof HEATMAP_MAGNITUDE_FIELDS)[number];
  const d = store.dicts;
  const rowOfKey = new Map(rows.map((r, i) => [laneKey(r.node, r.gpu), i]));
  const laneRow = (L: number): Int32Array => {
    const rowOfId = new Int32Array(L);
    for (let id = 0; id < L; id++) rowOfId[id] = rowOfKey.get(laneKey(d.laneNode[id]!, d.laneGpu[id]!)) ?? -1;
    return rowOfId;
  };
  // Bucket-major (cell k·R + row): one timestamp's rows land in one R-cell stretch. Row-major
  // put each of a group's 1024 lanes on its own page (a 9.6 KB stride): the cold util
  // heatmap of a 1024-GPU window spent ~300 ms in this loop's cache and TLB misses (#20).
  const cell = new Float64Array(R * X).fill(-Infinity);
  if (field === "util") {
    // the fleet band's lane maxima (bucket-major by lane id), moved to the rows shown
    const { maxima, L } = await utilMaxima(store, t0, t1, X);
    const rowOfId = laneRow(L);
    for (let k = 0; k < X; k++)
      for (let id = 0; id < L; id++) {
        const row = rowOfId[id]!;
        const v = maxima[k * L + id]!;
        if (row >= 0 && v >= 0) cell[k * R + row] = v;
      }
  } else {
    const blocks = await store.gpuUtil.window(t0, t1);
    await Promise.all(blocks.map((b) => b.ensureMagnitudes()));
    const rowOfId = laneRow(d.laneKeys.values.length);
    const span = t1 - t0;
    const slow: GpuBlock[] = [];
    const pause = timeSlicer();
    for (const b of blocks) {
      await pause();
      const f = b.flatUtil();
      const col = field === "mem_mb" ? b.mem.flat : b.power.flat;
      if (!f || !col) {
        slow.push(b);
        continue;
      }
      if (b.rows === 0 || b.maxTs < t0 || b.minTs > t1) continue;
      cellMax(cell, rowOfId, f.gTs, f.gStart, f.lane, col, b.rows, b.groupRange(t0, t1), t0, t1, span, X, R);
    }
    forEachTickRun(slow, t0, t1, (b, ts, c, from, to) => {
      const lane = b.lane.chunks[c]!;
      const col = (field === "mem_mb" ? b.mem : b.power).chunks[c]!;
      const base = bucket(ts) * R;
      for (let o = from; o < to; o++) {
        const row = rowOfId[lane[o]!]!;
        if (row < 0) continue;
        const v = col[o]!;
        const at = base + row;
        if (v > cell[at]!) cell[at] = v;
      }
    });
  }
  let peak = -Infinity;
  for (let i = 0; i < cell.length; i++) if (cell[i]! > peak) peak = cell[i]!;
  if (peak === -Infinity) peak = 1.0;
  const max = field === "util" ? 100.0 : peak;
  for (let k = 0; k < X; k++)
    for (let row = 0; row < R; row++) {
      const v = cell[k * R + row]!;
      if (v === -Infinity) continue;
      const byte = Math.trunc((v / max) * 255);
      values[row * X + k] = Number.isNaN(byte) ? 0 : Math.min(255, byte);
    }
  return { rows, x_buckets: X, t0, t1, metric, scale: { max }, palette: null, values };
}

/** MAX per (bucket, row) — cell k·R + row — over the rows of groups [g0, g1) of one block with contiguous columns. */
function cellMax(
  cell: Float64Array,
  rowOfId: Int32Array,
  gTs: Float64Array,
  gStart: Uint32Array,
  lane: Uint16Array,
  col: Int32Array | Int16Array,
  rows: number,
  [g0, g1]: [number, number],
  t0: number,
  t1: number,
  span: number,
  X: number,
  R: number,
): void {
  const G = gTs.length;
  for (let g = g0; g < g1; g++) {
    const ts = gTs[g]!;
    if (ts < t0 || ts > t1) continue;
    const base = Math.min(X - 1, Math.max(0, Math.trunc(((ts - t0) / span) * X))) * R;
    const end = g + 1 < G ? gStart[g + 1]! : rows;
    for (let r = gStart[g]!; r < end; r++) {
      const row = rowOfId[lane[r]!]!;
      if (row < 0) continue;
      const v = col[r]!;
      const at = base + row;
      if (v > cell[at]!) cell[at] = v;
    }
  }
}

/**
 * The phase heatmap's matrix, painted into `values` (row-major, `rows` × X): per cell the
 * palette id of the phase painted last, idle phases first (docs/api.md 8.9); returns the
 * palette's names (sorted, id = index + 1).
 */
async function paintPhases(
  store: MetricStore,
  values: Uint8Array,
  rows: readonly { node: string; gpu: number }[],
  t0: number,
  t1: number,
  X: number,
  selection: LaneSet | null,
): Promise<{ names: string[] }> {
  const rowOf = new Map(rows.map((r, i) => [laneKey(r.node, r.gpu), i]));
  // Lanes as the index has them, else the pass's pool unsplit (a NaN start has no place in
  // the t0 order: such a window is split and painted lane by lane).
  const found = await findIntervals(store, t0, t1, selection);
  let ivs: LaneIntervals[] | null = null;
  let unsplit: FoundIntervals | null = null;
  if (Array.isArray(found)) ivs = found;
  else if (found.pool.anyNaNStart()) ivs = found.pool.split(found.lanes);
  else unsplit = found;
  const str = store.dicts.phaseStrings.values;
  const seen = new Uint8Array(str.length + 1);
  if (ivs) for (const l of ivs) for (let i = 0; i < l.n; i++) seen[l.name[i]!] = 1;
  if (unsplit) {
    const { pool } = unsplit;
    pool.forEachChunk(({ name: names }, m) => {
      for (let i = 0; i < m; i++) seen[names[i]!] = 1;
    });
  }
  const present: number[] = [];
  for (let id = 0; id < seen.length; id++) if (seen[id]) present.push(id);
  const names = [...new Set([...present].map((id) => str[id]!))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const paletteId = new Map(names.map((n, i) => [n, i + 1]));
  // by phase string id: palette id, and 1 for idle phases (painted first)
  let maxId = 0;
  for (const id of present) maxId = Math.max(maxId, id);
  const idOf = new Uint32Array(maxId + 1);
  const idle = new Uint8Array(maxId + 1);
  for (const id of present) {
    idOf[id] = paletteId.get(str[id]!)!;
    idle[id] = IDLE_PHASES.has(str[id]!) ? 1 : 0;
  }
  if (ivs) {
    // Rows are distinct per lane, so painting lane by lane (idle first, then the rest, each
    // in phases_by_lane order) leaves the same matrix as two passes over all intervals.
    for (const l of ivs) {
      const r = rowOf.get(laneKey(l.node, l.gpu));
      if (r === undefined) continue;
      paintLane(values, r * X, l, idOf, idle, 1, t0, t1, X);
      paintLane(values, r * X, l, idOf, idle, 0, t0, t1, X);
    }
  }
  if (unsplit) {
    const rowOfSlot = Int32Array.from(unsplit.lanes, (l) => rowOf.get(laneKey(l.node, l.gpu)) ?? -1);
    paintFound(values, unsplit.pool, rowOfSlot, idOf, idle, t0, t1, X);
  }
  // nothing reads the pass's pool past this point (`ivs` are the split's copies)
  if (!Array.isArray(found)) found.pool.release();
  return { names };
}

/** Paint one lane's intervals of one class (idle 1 / active 0) into its matrix row. */
function paintLane(
  values: Uint8Array,
  at: number,
  l: LaneIntervals,
  idOf: Uint32Array,
  idle: Uint8Array,
  pass: number,
  t0: number,
  t1: number,
  X: number,
): void {
  const span = t1 - t0;
  for (let i = 0; i < l.n; i++) {
    const nm = l.name[i]!;
    if (idle[nm] !== pass) continue;
    const b0 = Math.min(X - 1, Math.max(0, Math.trunc(((Math.max(l.t0[i]!, t0) - t0) / span) * X)));
    const b1 = Math.min(X - 1, Math.max(0, Math.trunc(((Math.min(l.t1[i]!, t1) - t0) / span) * X)));
    values.fill(idOf[nm]!, at + b0, at + b1 + 1);
  }
}

/**
 * `paintLane`'s matrix straight from the unsplit pool (phases.ts FoundIntervals): a cell
 * shows the interval that lane-by-lane painting would paint last over it — the active one
 * latest in its lane's order, else the idle one latest — where a lane's order is t0, then
 * the order found (the stable sort's tie order, which the pool keeps). Each cell keeps the
 * class and t0 of what it shows; pool order settles ties. No t0 may be NaN (the caller
 * splits such a window instead).
 */
function paintFound(
  values: Uint8Array,
  pool: IntervalPool,
  rowOfSlot: Int32Array,
  idOf: Uint32Array,
  idle: Uint8Array,
  t0: number,
  t1: number,
  X: number,
): void {
  const span = t1 - t0;
  // 0: nothing painted, 1: an idle interval, 2: an active one
  const cls = new Uint8Array(values.length);
  const start = new Float64Array(values.length);
  pool.forEachChunk(({ slot: slots, t0: s0, t1: s1, name: names }, m) => {
    for (let i = 0; i < m; i++) {
      const row = rowOfSlot[slots[i]!]!;
      if (row < 0) continue;
      const nm = names[i]!;
      const c = 2 - idle[nm]!;
      const a = s0[i]!;
      const b0 = Math.min(X - 1, Math.max(0, Math.trunc(((Math.max(a, t0) - t0) / span) * X)));
      const b1 = Math.min(X - 1, Math.max(0, Math.trunc(((Math.min(s1[i]!, t1) - t0) / span) * X)));
      const v = idOf[nm]!;
      for (let at = row * X + b0, end = row * X + b1; at <= end; at++) {
        const held = cls[at]!;
        if (c > held || (c === held && a >= start[at]!)) {
          cls[at] = c;
          start[at] = a;
          values[at] = v;
        }
      }
    }
  });
}

/**
 * MAX util per (bucket k, lane id) over the window's GPU samples, as a dense matrix (cell
 * k·L + lane id, −1 = no sample): the fleet band's input and the util heatmap's cells
 * (`maxUtilByBucket`, which reads a block's kept util peaks where they answer a bucket).
 */
async function utilMaxima(store: MetricStore, t0: number, t1: number, X: number): Promise<{ maxima: Int16Array; L: number }> {
  const blocks = await store.gpuUtil.window(t0, t1);
  const L = store.dicts.laneKeys.values.length;
  const maxima = new Int16Array(X * L).fill(-1);
  const bucket = bucketFn(t0, t1, X);
  const pause = timeSlicer();
  for (const b of blocks) {
    await pause();
    maxUtilByBucket(b, t0, t1, bucket, maxima, L);
  }
  return { maxima, L };
}

async function lifecycle(
  store: MetricStore,
  t0: number,
  t1: number,
  X: number,
  bucket: (ts: number) => number,
): Promise<Heatmap> {
  const all = await trajectoryLanes(store, t0, t1);
  const lanes = all.slice(0, LIFECYCLE_MAX_ROWS);
  const values = new Uint8Array(lanes.length * X);
  lanes.forEach((l, r) => {
    const paint = (a: number | null, b: number | null, v: number) => {
      const b0 = bucket(a || t0);
      const b1 = bucket(b || t1);
      if (b1 >= b0) values.fill(v, r * X + b0, r * X + b1 + 1);
    };
    for (const a of l.attempts) paint(a.t0, a.t1, 1);
    for (const s of l.segments) paint(s.t0, s.t1, s.kind === "gen" ? 2 : 3);
  });
  return {
    rows: lanes.map((l) => ({ sample_index: l.sample_index, group_index: l.group_index })),
    rows_total: all.length,
    x_buckets: X,
    t0,
    t1,
    metric: "lifecycle",
    scale: null,
    palette: LIFECYCLE_PALETTE,
    values,
  };
}

export interface Fleet {
  t0: number;
  t1: number;
  x_buckets: number;
  lanes: number;
  palette: string[];
  composition: Record<string, number[]>;
  band: { p10: (number | null)[]; p50: (number | null)[]; p90: (number | null)[]; min: (number | null)[] };
}

/** The window a heatmap (and the fleet band) covers: the query's bounds, else the run's time range; null for a run without data. */
async function heatmapWindow(store: MetricStore, t0q: number | null, t1q: number | null): Promise<[number, number] | null> {
  const range = await store.timeRange();
  return range === null ? null : [t0q ?? range[0], t1q ?? range[1]];
}

export async function fleet(store: MetricStore, t0q: number | null, t1q: number | null, X: number): Promise<Fleet> {
  checkXBuckets(X);
  // The band's GPU hours are read while the phase rows are painted: on a first read, each
  // of the two leaves cores idle that the other can use (#20). `utilMaxima` below reads the
  // same files again: it waits for this read and parses nothing.
  const win = await heatmapWindow(store, t0q, t1q);
  if (win && win[1] > win[0]) void store.gpuUtil.window(win[0], win[1]).catch(() => undefined); // a failure is met again there
  const phase = await heatmap(store, "phase", t0q, t1q, X, null);
  const palette = phase.palette ?? [];
  const R = phase.rows.length;
  const composition: Record<string, number[]> = {};
  if (R > 0 && palette.length > 0) {
    const counts = new Uint32Array(palette.length * X);
    for (let r = 0; r < R; r++)
      for (let b = 0; b < X; b++) {
        const v = phase.values[r * X + b]!;
        counts[v * X + b]!++;
      }
    // a fraction is count / R: round each of the R + 1 possible values once
    const frac = Array.from({ length: R + 1 }, (_, c) => pyRound(c / R, 4));
    palette.forEach((name, id) => {
      const arr = packedNumbers(X, true);
      for (let b = 0; b < X; b++) arr[b] = frac[counts[id * X + b]!]!;
      composition[name === "" ? "none" : name] = arr;
    });
  }
  // packed (`packedNumbers`), then null where a bucket has no sample
  const nulls = (): (number | null)[] => (packedNumbers(X, true) as (number | null)[]).fill(null);
  const band: Fleet["band"] = { p10: nulls(), p50: nulls(), p90: nulls(), min: nulls() };
  const rt0 = phase.t0;
  const rt1 = phase.t1;
  if (rt1 > rt0) {
    // lane maxima per bucket: cell (bucket k, lane id) of a dense matrix, -1 = no sample
    const { maxima, L } = await utilMaxima(store, rt0, rt1, X);
    // Lane maxima are small integers (util, 0…255): quantiles by counting, not sorting —
    // the element at a sorted position is read off the cumulative histogram.
    const hist = new Int32Array(256);
    const at = (n: number, q: number) => {
      let want = Math.round((n - 1) * q);
      for (let v = 0; v < 256; v++) {
        want -= hist[v]!;
        if (want < 0) return v;
      }
      return 255;
    };
    for (let k = 0; k < X; k++) {
      hist.fill(0);
      let n = 0;
      for (let l = 0; l < L; l++) {
        const v = maxima[k * L + l]!;
        if (v >= 0) {
          hist[v]!++;
          n++;
        }
      }
      if (n === 0) continue;
      band.p10[k] = at(n, 0.1);
      band.p50[k] = at(n, 0.5);
      band.p90[k] = at(n, 0.9);
      band.min[k] = at(n, 0);
    }
  }
  return { t0: rt0, t1: rt1, x_buckets: X, lanes: R, palette, composition, band };
}
