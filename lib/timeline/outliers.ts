/**
 * Outlier proposals (docs/api.md 8.11): the machine only proposes lanes; the UI turns picks
 * into a selection.
 */
import { badRequest } from "@/lib/contracts/errors";
import { cmpStr, forEachRowRun, type MetricStore } from "@/lib/store/telemetry";
import { laneKey } from "@/lib/timeline/lanes";
import { phasesByLane } from "@/lib/timeline/phases";

export interface Outlier {
  node: string;
  gpu: number;
  score: number;
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
    const sum = new Float64Array(L);
    const cnt = new Float64Array(L);
    forEachRowRun(blocks, t0, t1, (b, c, from, to) => {
      const lane = b.lane.chunks[c]!;
      const util = b.util.chunks[c]!;
      for (let o = from; o < to; o++) {
        const id = lane[o]!;
        sum[id] = sum[id]! + util[o]!;
        cnt[id] = cnt[id]! + 1;
      }
    });
    const out: Outlier[] = [];
    for (let id = 0; id < L; id++) {
      if (cnt[id]) out.push({ node: d.laneNode[id]!, gpu: d.laneGpu[id]!, score: sum[id]! / cnt[id]! });
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
