/**
 * Outlier proposals (docs/api.md 8.11): the machine only proposes lanes; the UI turns picks
 * into a selection.
 */
import { badRequest } from "@/lib/contracts/errors";
import { cmpStr, forEachRowRun, forEachRowRunOutside, type GpuBlock, type MetricStore } from "@/lib/store/telemetry";
import { laneKey } from "@/lib/timeline/lanes";
import { phasesByLane } from "@/lib/timeline/phases";

export interface Outlier {
  node: string;
  gpu: number;
  score: number;
}

/**
 * Σ util and rows per lane id over the window. A block that the window holds for the most
 * part starts from its kept per-lane totals (`GpuBlock.utilTotals`) less the rows outside
 * the window; any other block is summed row by row. util is an integer, so both ways give
 * exactly the row-by-row sums (the mean is then the reference's to the last digit).
 */
function laneUtilSums(blocks: readonly GpuBlock[], t0: number | null, t1: number | null, L: number): { sum: Float64Array; count: Float64Array } {
  const sum = new Float64Array(L);
  const count = new Float64Array(L);
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  const add = (sign: 1 | -1) => (b: GpuBlock, c: number, from: number, to: number) => {
    const lane = b.lane.chunks[c]!;
    const util = b.util.chunks[c]!;
    for (let o = from; o < to; o++) {
      const id = lane[o]!;
      sum[id] = sum[id]! + sign * util[o]!;
      count[id] = count[id]! + sign;
    }
  };
  const rows: GpuBlock[] = [];
  for (const b of blocks) {
    if (b.rows === 0 || b.maxTs < lo || b.minTs > hi) continue;
    const span = b.maxTs - b.minTs;
    const held = span > 0 ? (Math.min(hi, b.maxTs) - Math.max(lo, b.minTs)) / span : 1;
    if (held < 0.5) {
      rows.push(b);
      continue;
    }
    const totals = b.utilTotals();
    for (let id = 0; id < totals.sum.length && id < L; id++) {
      sum[id] = sum[id]! + totals.sum[id]!;
      count[id] = count[id]! + totals.count[id]!;
    }
    forEachRowRunOutside([b], t0, t1, add(-1));
  }
  forEachRowRun(rows, t0, t1, add(1));
  return { sum, count };
}

export async function outliers(
  store: MetricStore,
  criterion: string,
  t0: number | null,
  t1: number | null,
  topK: number,
): Promise<Outlier[]> {
  if (criterion === "lowest_util") {
    const blocks = await store.gpuUtil.window(t0, t1);
    const d = store.dicts;
    const L = d.laneKeys.values.length;
    const { sum, count } = laneUtilSums(blocks, t0, t1, L);
    const out: Outlier[] = [];
    for (let id = 0; id < L; id++) {
      if (count[id]) out.push({ node: d.laneNode[id]!, gpu: d.laneGpu[id]!, score: sum[id]! / count[id]! });
    }
    out.sort((a, b) => a.score - b.score || cmpStr(a.node, b.node) || a.gpu - b.gpu);
    return out.slice(0, topK);
  }
  const prefix = "slowest_phase:";
  if (criterion.startsWith(prefix)) {
    const name = criterion.slice(prefix.length);
    const ivs = await phasesByLane(store, t0, t1, null);
    const acc = new Map<string, Outlier & { n: number }>();
    for (const iv of ivs) {
      if (iv.name !== name) continue;
      const k = laneKey(iv.node, iv.gpu);
      let a = acc.get(k);
      if (!a) acc.set(k, (a = { node: iv.node, gpu: iv.gpu, score: 0, n: 0 }));
      a.score += iv.t1 - iv.t0;
      a.n++;
    }
    const out = [...acc.values()].map((a) => ({ node: a.node, gpu: a.gpu, score: a.score / a.n }));
    out.sort((a, b) => b.score - a.score || cmpStr(b.node, a.node) || b.gpu - a.gpu);
    return out.slice(0, topK);
  }
  throw badRequest(`unknown outlier criterion '${criterion}'`);
}
