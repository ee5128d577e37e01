/**
 * GPU utilisation series and process snapshots (docs/api.md 8.5). Rows come straight from the
 * typed columns of the gpu_util blocks; only the selected points become JS numbers.
 */
import { lowerBound } from "@/lib/bisect";
import { timeSlicer } from "@/lib/timeline/slice";
import { cmpStr, forEachTickRun, laneCountBound, type GpuBlock, type GpuProcessSample, type LaneRows, type MetricStore } from "@/lib/store/telemetry";
import { minMaxIndices, packedNumbers } from "@/lib/timeline/downsample";
import { laneLabel, type LaneSet } from "@/lib/timeline/lanes";

export interface GpuLaneSeries {
  ts: number[];
  util: number[];
  mem_mb: number[];
  power_w: number[];
}

/** Per-lane selection mask over the store's lane ids (null selection = everything). */
export function laneMask(store: MetricStore, selection: LaneSet | null): (id: number) => boolean {
  if (!selection) return () => true;
  const d = store.dicts;
  const memo: (boolean | undefined)[] = [];
  return (id) => (memo[id] ??= selection.has(d.laneNode[id]!, d.laneGpu[id]!));
}

interface LaneAcc {
  id: number;
  n: number;
  ts: Float64Array;
  util: Uint8Array;
  mem: Int32Array;
  power: Int16Array;
  sorted: boolean;
}

export async function gpuSeries(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  maxPoints: number,
  selection: LaneSet | null,
): Promise<Record<string, GpuLaneSeries>> {
  const blocks = await store.gpuUtil.window(t0, t1);
  const pause = timeSlicer();
  const L = store.dicts.laneKeys.values.length;
  const pick = laneMask(store, selection);
  const selected = new Uint8Array(L);
  for (let id = 0; id < L; id++) selected[id] = pick(id) ? 1 : 0;
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  const live = blocks.filter((b) => b.rows > 0 && b.maxTs >= lo && b.minTs <= hi);
  await Promise.all(live.map((b) => b.ensureMagnitudes()));
  const ids: number[] = [];
  for (let id = 0; id < L; id++) if (selected[id]) ids.push(id);
  // pass 1: room per lane. A flat block's rows are counted per lane from its chunked
  // counts (`laneCounts`): the rows in whole chunks around the groups `groupRange` gives —
  // all groups in a block whose ticks are out of order (rows of several nodes interleave)
  // — so an upper bound; each row's tick is checked in pass 2.
  const counts = new Uint32Array(L);
  /** Per live block: rows in its group range, and of those (at most) the selected lanes' (flat blocks). */
  const spanRows: number[] = [];
  const pickedRows: number[] = [];
  for (const b of live) {
    await pause();
    const f = b.flat();
    const byCount = f ? b.laneCounts() : null;
    if (!f || !byCount) {
      forEachTickRun([b], t0, t1, (bb, _ts, c, from, to) => {
        const lane = bb.lane.chunks[c]!;
        for (let o = from; o < to; o++) {
          const id = lane[o]!;
          if (selected[id]) counts[id]!++;
        }
      });
      spanRows.push(0);
      pickedRows.push(0);
      continue;
    }
    const groups = b.groupRange(t0, t1);
    const [rLo, rHi] = rowRange(f, b.rows, groups);
    let picked = 0;
    for (const id of ids) {
      const n = laneCountBound(byCount, id, groups[0], groups[1]);
      counts[id]! += n;
      picked += n;
    }
    spanRows.push(rHi - rLo);
    pickedRows.push(picked);
  }
  // pass 2: every lane's rows into one set of columns, lane after lane (`start`), in file order.
  const start = new Float64Array(L + 1);
  for (let id = 0; id < L; id++) start[id + 1] = start[id]! + counts[id]!;
  const total = start[L]!;
  const cols = takeColumns(total);
  /**
   * Next row of each lane in `cols` (−1: not selected, or no room counted), and where its
   * room ends: rows a block gained after the count (another request read its growing hour
   * during a pause) are left out rather than written into the next lane's room.
   */
  const pos = new Int32Array(L).fill(-1);
  const end = new Int32Array(L);
  for (const id of ids) {
    if (counts[id]! > 0) pos[id] = start[id]!;
    end[id] = start[id + 1]!;
  }
  for (let bi = 0; bi < live.length; bi++) {
    await pause();
    const b = live[bi]!;
    const f = b.flat();
    if (!f || !b.laneCounts()) {
      forEachTickRun([b], t0, t1, (bb, ts, c, from, to) =>
        appendTick(cols, pos, end, ts, bb.lane.chunks[c]!, bb.util.chunks[c]!, bb.mem.chunks[c]!, bb.power.chunks[c]!, from, to),
      );
      continue;
    }
    // Few of the span's rows selected (a 32-lane view of a 1024-GPU hour): read just theirs.
    // Otherwise one pass in file order: reading lane by lane jumps across the columns, and
    // for half the rows (32 of 64 lanes) it was slower than reading them all (docs/bench.md).
    const groups = b.groupRange(t0, t1);
    const byLane = pickedRows[bi]! * LANE_READ_RATIO < spanRows[bi]! ? b.laneRows() : null;
    if (byLane) {
      const [rLo, rHi] = rowRange(f, b.rows, groups);
      const g0 = groups[0];
      for (const id of ids) {
        if (pos[id]! < 0 || id + 1 >= byLane.offsets.length) continue;
        const [from, to] = laneRowSpan(byLane, id, rLo, rHi);
        if (to > from) pos[id] = fillLaneRows(cols, pos[id]!, end[id]!, f, byLane.order, from, to, g0, lo, hi);
      }
    } else fillRows(cols, pos, end, f, b.rows, groups, lo, hi);
  }
  const lanes: LaneAcc[] = [];
  for (const id of ids) {
    if (pos[id]! < 0) continue;
    const s0 = start[id]!;
    const n = pos[id]! - s0;
    if (n === 0) continue; // every row counted had a tick outside the window
    const ts = cols.ts.subarray(s0, s0 + n);
    let sorted = true;
    for (let k = 1; k < n && sorted; k++) if (ts[k]! < ts[k - 1]!) sorted = false;
    lanes.push({ id, n, ts, util: cols.util.subarray(s0, s0 + n), mem: cols.mem.subarray(s0, s0 + n), power: cols.power.subarray(s0, s0 + n), sorted });
  }
  const d = store.dicts;
  lanes.sort((x, y) => cmpStr(d.laneNode[x.id]!, d.laneNode[y.id]!) || d.laneGpu[x.id]! - d.laneGpu[y.id]!);
  const out: Record<string, GpuLaneSeries> = {};
  for (const a of lanes) {
    await pause();
    if (!a.sorted) sortLane(a);
    const sel = minMaxIndices(a.util, maxPoints);
    const n = sel ? sel.length : a.n;
    const s: GpuLaneSeries = { ts: packedNumbers(n, true), util: packedNumbers(n, false), mem_mb: packedNumbers(n, false), power_w: packedNumbers(n, false) };
    for (let k = 0; k < n; k++) {
      const i = sel ? sel[k]! : k;
      s.ts[k] = a.ts[i]!;
      s.util[k] = a.util[i]!;
      s.mem_mb[k] = a.mem[i]!;
      s.power_w[k] = a.power[i]!;
    }
    out[laneLabel(d.laneNode[a.id]!, d.laneGpu[a.id]!)] = s;
  }
  giveColumns(cols);
  return out;
}

/** Selected lanes' rows, lane after lane (`gpuSeries` pass 2). */
interface LaneColumns {
  ts: Float64Array;
  util: Uint8Array;
  mem: Int32Array;
  power: Int16Array;
}

/**
 * Columns of the last query, for the next one. They are as large as the rows a query
 * selects (15 bytes a row: 7 MB for 32 lanes × 4 h at 1 Hz), and memory a process has
 * not touched yet costs ~11 µs a 4 KiB page on these machines (docs/bench.md "12-06 f"),
 * so fresh columns cost a query ~20 ms for 32 lanes and ~300 ms for 512 lanes of a
 * 1024-GPU window. Kept up to SPARE_ROWS rows; a query running while another holds them
 * allocates its own.
 */
let spare: LaneColumns | null = null;
const SPARE_ROWS = 2 << 20;

function takeColumns(rows: number): LaneColumns {
  const s = spare;
  if (s && s.ts.length >= rows) {
    spare = null;
    return s;
  }
  return { ts: new Float64Array(rows), util: new Uint8Array(rows), mem: new Int32Array(rows), power: new Int16Array(rows) };
}

/** Done with `c` (no view of it is kept): the spare for the next query if it is the largest one within SPARE_ROWS. */
function giveColumns(c: LaneColumns): void {
  if (c.ts.length <= SPARE_ROWS && (!spare || spare.ts.length < c.ts.length)) spare = c;
}

/**
 * A block's rows are read lane by lane when fewer than 1 in LANE_READ_RATIO of the rows in
 * the window's span are the selected lanes'. Measured on the bench's 64-GPU run (4 h, rows of
 * 64 lanes a tick): by lane 21–25 ms for 32 lanes, in file order 16 ms.
 */
const LANE_READ_RATIO = 4;

/** Rows [rLo, rHi) of groups [g0, g1) of a block's flat columns (`rows` rows in all). */
function rowRange(f: NonNullable<ReturnType<GpuBlock["flat"]>>, rows: number, [g0, g1]: [number, number]): [number, number] {
  const G = f.gTs.length;
  return [g0 < G ? f.gStart[g0]! : rows, g1 < G ? f.gStart[g1]! : rows];
}

/** Append the rows of groups [g0, g1) with ticks in [lo, hi] to their lanes (`pos`), in file order. */
function fillRows(
  cols: LaneColumns,
  pos: Int32Array,
  end: Int32Array,
  f: NonNullable<ReturnType<GpuBlock["flat"]>>,
  rows: number,
  [g0, g1]: [number, number],
  lo: number,
  hi: number,
): void {
  const { gTs, gStart, lane, util, mem, power } = f;
  const G = gTs.length;
  for (let g = g0; g < g1; g++) {
    const ts = gTs[g]!;
    if (ts < lo || ts > hi) continue;
    appendTick(cols, pos, end, ts, lane, util, mem, power, gStart[g]!, g + 1 < G ? gStart[g + 1]! : rows);
  }
}

/** Append rows [from, to) of one tick `ts` (column arrays as given) to their lanes' next positions (`pos`, −1: skipped) while they have room (`end`). */
function appendTick(
  cols: LaneColumns,
  pos: Int32Array,
  end: Int32Array,
  ts: number,
  lane: Uint16Array,
  util: Uint8Array,
  mem: Int32Array,
  power: Int16Array,
  from: number,
  to: number,
): void {
  for (let r = from; r < to; r++) {
    const id = lane[r]!;
    const p = pos[id]!;
    if (p < 0 || p >= end[id]!) continue;
    pos[id] = p + 1;
    cols.ts[p] = ts;
    cols.util[p] = util[r]!;
    cols.mem[p] = mem[r]!;
    cols.power[p] = power[r]!;
  }
}

/** Where lane `id`'s rows in [rLo, rHi) are in `x.order`: [from, to). */
function laneRowSpan(x: LaneRows, id: number, rLo: number, rHi: number): [number, number] {
  const start = x.offsets[id]!;
  const end = x.offsets[id + 1]!;
  const from = lowerBound(x.order, rLo, start, end);
  return [from, lowerBound(x.order, rHi, from, end)];
}

/**
 * Write one lane's rows `order[from..to)` (ascending, all in groups ≥ g0) with ticks in
 * [lo, hi] at `cols[p…limit)`, each with its group's tick — the rows `fillRows` gives that
 * lane, in the same order. Returns the lane's next position.
 */
function fillLaneRows(
  cols: LaneColumns,
  p: number,
  limit: number,
  f: NonNullable<ReturnType<GpuBlock["flat"]>>,
  order: Uint32Array,
  from: number,
  to: number,
  g0: number,
  lo: number,
  hi: number,
): number {
  const { gTs, gStart, util, mem, power } = f;
  const G = gTs.length;
  let g = g0;
  for (let i = from; i < to && p < limit; i++) {
    const r = order[i]!;
    if (g + 1 < G && gStart[g + 1]! <= r) g = groupOfRow(gStart, G, g + 1, r);
    const ts = gTs[g]!;
    if (ts < lo || ts > hi) continue;
    cols.ts[p] = ts;
    cols.util[p] = util[r]!;
    cols.mem[p] = mem[r]!;
    cols.power[p] = power[r]!;
    p++;
  }
  return p;
}

/**
 * The group holding row `r`: the last group from `g` on whose first row is ≤ r (`gStart[g]`
 * ≤ r given). Galloping from `g`: a lane's next row is a few groups on where the other
 * lanes of a tick share its group, ~a node count on where every node's tick is a group of
 * its own (a 1024-GPU hour: 460 k groups — a walk group by group took 130 ms a window).
 */
function groupOfRow(gStart: Uint32Array, G: number, g: number, r: number): number {
  let lo = g;
  let step = 1;
  let hi = lo + 1;
  while (hi < G && gStart[hi]! <= r) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > G) hi = G;
  while (hi - lo > 1) {
    const m = (lo + hi) >>> 1;
    if (gStart[m]! <= r) lo = m;
    else hi = m;
  }
  return lo;
}

/** Stable sort of one lane's rows by ts (out-of-order batches). */
function sortLane(a: LaneAcc): void {
  const order = Array.from({ length: a.n }, (_, i) => i);
  order.sort((i, j) => a.ts[i]! - a.ts[j]! || i - j);
  const ts = a.ts.slice();
  const util = a.util.slice();
  const mem = a.mem.slice();
  const power = a.power.slice();
  order.forEach((i, k) => {
    a.ts[k] = ts[i]!;
    a.util[k] = util[i]!;
    a.mem[k] = mem[i]!;
    a.power[k] = power[i]!;
  });
}

export async function gpuProcesses(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  selection: LaneSet | null,
): Promise<GpuProcessSample[]> {
  const blocks = await store.gpuProcesses.window(t0, t1);
  const out: GpuProcessSample[] = [];
  for (const b of blocks)
    for (const r of b.rows) {
      if ((t0 !== null && r.ts < t0) || (t1 !== null && r.ts > t1)) continue;
      if (selection && !selection.has(r.node, r.gpu)) continue;
      out.push(r);
    }
  return out;
}
