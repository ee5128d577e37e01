/**
 * GPU utilisation series and process snapshots (docs/api.md 8.5). Rows come straight from the
 * typed columns of the gpu_util blocks; only the selected points become JS numbers.
 */
import { timeSlicer } from "@/lib/timeline/slice";
import { cmpStr, forEachTickRun, type GpuBlock, type GpuProcessSample, type MetricStore } from "@/lib/store/telemetry";
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
  // pass 1: rows per lane
  const counts = new Uint32Array(L);
  for (const b of live) {
    await pause();
    const f = b.flat();
    if (!f) {
      forEachTickRun([b], t0, t1, (bb, _ts, c, from, to) => {
        const lane = bb.lane.chunks[c]!;
        for (let o = from; o < to; o++) {
          const id = lane[o]!;
          if (selected[id]) counts[id]!++;
        }
      });
      continue;
    }
    countLanes(counts, selected, f.gTs, f.gStart, f.lane, b.rows, b.groupRange(t0, t1), lo, hi);
  }
  const accs = new Array<LaneAcc | undefined>(L);
  for (let id = 0; id < L; id++) {
    const n = counts[id]!;
    if (n)
      accs[id] = { id, n: 0, ts: new Float64Array(n), util: new Uint8Array(n), mem: new Int32Array(n), power: new Int16Array(n), sorted: true };
  }
  // pass 2: fill
  for (const b of live) {
    await pause();
    const f = b.flat();
    if (!f) {
      forEachTickRun([b], t0, t1, (bb, ts, c, from, to) => {
        const lane = bb.lane.chunks[c]!;
        const util = bb.util.chunks[c]!;
        const mem = bb.mem.chunks[c]!;
        const power = bb.power.chunks[c]!;
        for (let o = from; o < to; o++) {
          const a = accs[lane[o]!];
          if (!a) continue;
          const k = a.n++;
          if (k > 0 && ts < a.ts[k - 1]!) a.sorted = false;
          a.ts[k] = ts;
          a.util[k] = util[o]!;
          a.mem[k] = mem[o]!;
          a.power[k] = power[o]!;
        }
      });
      continue;
    }
    fillLanes(accs, f, b.rows, b.groupRange(t0, t1), lo, hi);
  }
  const d = store.dicts;
  const lanes = accs.filter((a): a is LaneAcc => a !== undefined);
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
  return out;
}

/** Rows per selected lane over groups [g0, g1) of one block with contiguous columns. */
function countLanes(
  counts: Uint32Array,
  selected: Uint8Array,
  gTs: Float64Array,
  gStart: Uint32Array,
  lane: Uint16Array,
  rows: number,
  [g0, g1]: [number, number],
  lo: number,
  hi: number,
): void {
  const G = gTs.length;
  for (let g = g0; g < g1; g++) {
    const ts = gTs[g]!;
    if (ts < lo || ts > hi) continue;
    const end = g + 1 < G ? gStart[g + 1]! : rows;
    for (let r = gStart[g]!; r < end; r++) {
      const id = lane[r]!;
      if (selected[id]) counts[id]!++;
    }
  }
}

/** Append the rows of groups [g0, g1) to their lanes' accumulators (file order). */
function fillLanes(
  accs: readonly (LaneAcc | undefined)[],
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
    const end = g + 1 < G ? gStart[g + 1]! : rows;
    for (let r = gStart[g]!; r < end; r++) {
      const a = accs[lane[r]!];
      if (a === undefined) continue;
      const k = a.n++;
      if (k > 0 && ts < a.ts[k - 1]!) a.sorted = false;
      a.ts[k] = ts;
      a.util[k] = util[r]!;
      a.mem[k] = mem[r]!;
      a.power[k] = power[r]!;
    }
  }
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
