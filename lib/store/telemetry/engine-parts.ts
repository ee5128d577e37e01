/**
 * Engine series "parts" (docs/api.md 8.6): the rows of one raw metric split by (addr, labels),
 * each sorted by ts and — for the engine-level view — folded over dp ranks (SUM, or MEAN
 * for the intensive gauges). Computed per hour partition and memoised on its block
 * (`EngineBlock.derived`); the folded parts of closed partitions are also written to the
 * binary cache, so whole-run questions (the abort-storm rule) never touch raw rows on a
 * second start. lib/timeline/engine.ts stitches partitions together.
 */
import { canonicalLabels, cmpStr, type Dicts, type EngineBlock, type EngineMetricColumns } from "@/lib/store/telemetry/blocks";
import { MASK, SHIFT } from "@/lib/store/telemetry/columns";

export interface Part {
  addr: string;
  labels: Record<string, string>;
  /** canonical labels string (sort key) */
  key: string;
  ts: Float64Array;
  value: Float64Array;
}

export const ENGINE_MEAN_AGGREGATED_METRICS: ReadonlySet<string> = new Set([
  "sglang_token_usage",
  "sglang_cache_hit_rate",
  "sglang_kv_transfer_latency_ms",
]);

/**
 * Parts of one metric over one whole block, memoised on the block until it grows. Folded
 * parts of a cache-backed block come from the cache file; otherwise from the raw rows.
 */
export async function blockParts(dicts: Dicts, b: EngineBlock, metricId: number, perDpRank: boolean): Promise<Part[]> {
  const key = partsKey(metricId, perDpRank);
  const hit = b.derived.get(key) as Part[] | undefined;
  if (hit) return hit;
  if (!perDpRank) {
    const stored = await b.loadFolded(metricId);
    if (stored) {
      b.derived.set(key, stored);
      return stored;
    }
  }
  await b.ensureRaw(metricId);
  return blockPartsSync(dicts, b, metricId, perDpRank);
}

/** Same, for a block whose raw columns of `metricId` are resident. */
export function blockPartsSync(dicts: Dicts, b: EngineBlock, metricId: number, perDpRank: boolean): Part[] {
  const key = partsKey(metricId, perDpRank);
  let parts = b.derived.get(key) as Part[] | undefined;
  if (!parts) {
    const cols = b.metrics.get(metricId);
    const mean = ENGINE_MEAN_AGGREGATED_METRICS.has(dicts.metrics.values[metricId]!);
    parts = cols && cols.rows > 0 ? partsOf(dicts, [cols], null, null, perDpRank, mean) : [];
    b.derived.set(key, parts);
  }
  return parts;
}

const partsKey = (metricId: number, perDpRank: boolean) => `parts:${metricId}:${perDpRank}`;

export function withoutNulls(labels: Record<string, string | null>, dropDp: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in labels) {
    const v = labels[k];
    if (v === null || v === undefined || (dropDp && k === "dp_rank")) continue;
    out[k] = v;
  }
  return out;
}

/** One pass over the rows of `cols` with t0 ≤ ts ≤ t1: parts, sorted and (unless per dp rank) folded. */
export function partsOf(
  d: Dicts,
  cols: readonly EngineMetricColumns[],
  t0: number | null,
  t1: number | null,
  perDpRank: boolean,
  mean: boolean,
): Part[] {
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  // raw series id → part index
  const partOf = new Int32Array(d.seriesAddr.length).fill(-1);
  const partIndex = new Map<string, number>();
  const meta: { addr: string; labels: Record<string, string>; key: string }[] = [];
  const counts: number[] = [];
  const resolve = (sid: number): number => {
    const labels = withoutNulls(d.seriesLabels[sid]!, !perDpRank);
    const addr = d.seriesAddr[sid]!;
    const key = canonicalLabels(labels);
    const full = `${addr}\u0000${key}`;
    let p = partIndex.get(full);
    if (p === undefined) {
      p = meta.length;
      partIndex.set(full, p);
      meta.push({ addr, labels, key });
      counts.push(0);
    }
    partOf[sid] = p;
    return p;
  };
  // pass 1: resolve parts and count rows; pass 2: fill typed columns
  for (const col of cols) {
    const [g0, g1] = col.groupRange(t0, t1);
    const series = col.series.chunks;
    for (let g = g0; g < g1; g++) {
      const ts = col.groupTs(g);
      if (ts < lo || ts > hi) continue;
      const end = col.groupEnd(g);
      for (let r = col.groupStart(g); r < end; r++) {
        const sid = series[r >>> SHIFT]![r & MASK]!;
        const p = partOf[sid]!;
        counts[p < 0 ? resolve(sid) : p]!++;
      }
    }
  }
  if (!perDpRank) {
    const folded = foldedParts(cols, lo, hi, partOf, meta, counts, mean);
    if (folded) return folded;
  }
  const parts: Part[] = meta.map((m, i) => ({ ...m, ts: new Float64Array(counts[i]!), value: new Float64Array(counts[i]!) }));
  const fill = new Int32Array(parts.length);
  const sorted = new Uint8Array(parts.length).fill(1);
  for (const col of cols) {
    const [g0, g1] = col.groupRange(lo, hi);
    const series = col.series.chunks;
    const values = col.value.chunks;
    for (let g = g0; g < g1; g++) {
      const ts = col.groupTs(g);
      if (ts < lo || ts > hi) continue;
      const end = col.groupEnd(g);
      for (let r = col.groupStart(g); r < end; r++) {
        const c = r >>> SHIFT;
        const o = r & MASK;
        const p = partOf[series[c]![o]!]!;
        const part = parts[p]!;
        const k = fill[p]!++;
        if (k > 0 && ts < part.ts[k - 1]!) sorted[p] = 0;
        part.ts[k] = ts;
        part.value[k] = values[c]![o]!;
      }
    }
  }
  const out = parts.filter((p) => p.ts.length > 0);
  parts.forEach((p, i) => {
    if (!sorted[i]) sortPart(p);
    if (!perDpRank) fold(p, mean);
  });
  out.sort((a, b) => cmpStr(a.addr, b.addr) || cmpStr(a.key, b.key));
  return out;
}

/**
 * The fold done while filling, for parts whose rows arrive in ts order (the usual case):
 * a row with the previous row's ts joins its point (sum, or mean at the end), a larger ts
 * opens a new point — the same sums in the same order as sort-then-fold. Null when some
 * part is out of order (the caller then sorts first).
 */
function foldedParts(
  cols: readonly EngineMetricColumns[],
  lo: number,
  hi: number,
  partOf: Int32Array,
  meta: readonly { addr: string; labels: Record<string, string>; key: string }[],
  counts: readonly number[],
  mean: boolean,
): Part[] | null {
  const P = meta.length;
  const tsOut = counts.map((n) => new Float64Array(n));
  const valOut = counts.map((n) => new Float64Array(n));
  const runs = mean ? counts.map((n) => new Float64Array(n)) : null;
  const w = new Int32Array(P).fill(-1);
  const last = new Float64Array(P).fill(-Infinity);
  for (const col of cols) {
    const [g0, g1] = col.groupRange(lo, hi);
    const series = col.series.chunks;
    const values = col.value.chunks;
    for (let g = g0; g < g1; g++) {
      const ts = col.groupTs(g);
      if (ts < lo || ts > hi) continue;
      const end = col.groupEnd(g);
      for (let r = col.groupStart(g); r < end; r++) {
        const c = r >>> SHIFT;
        const o = r & MASK;
        const p = partOf[series[c]![o]!]!;
        const v = values[c]![o]!;
        const prev = last[p]!;
        if (ts === prev) {
          const k = w[p]!;
          const vo = valOut[p]!;
          vo[k] = vo[k]! + v;
          if (runs) runs[p]![k] = runs[p]![k]! + 1;
        } else if (ts > prev) {
          const k = ++w[p]!;
          tsOut[p]![k] = ts;
          valOut[p]![k] = v;
          if (runs) runs[p]![k] = 1;
          last[p] = ts;
        } else return null;
      }
    }
  }
  const out: Part[] = [];
  for (let p = 0; p < P; p++) {
    const n = w[p]! + 1;
    if (n === 0) continue;
    const value = valOut[p]!.length === n ? valOut[p]! : valOut[p]!.slice(0, n);
    if (runs) {
      const rl = runs[p]!;
      for (let k = 0; k < n; k++) value[k] = value[k]! / rl[k]!;
    }
    out.push({ ...meta[p]!, ts: tsOut[p]!.length === n ? tsOut[p]! : tsOut[p]!.slice(0, n), value });
  }
  out.sort((a, b) => cmpStr(a.addr, b.addr) || cmpStr(a.key, b.key));
  return out;
}

function sortPart(p: Part): void {
  const order = Array.from({ length: p.ts.length }, (_, i) => i);
  order.sort((i, j) => p.ts[i]! - p.ts[j]! || i - j);
  const ts = p.ts.slice();
  const value = p.value.slice();
  order.forEach((i, k) => {
    p.ts[k] = ts[i]!;
    p.value[k] = value[i]!;
  });
}

/** Merge same-ts rows of a ts-sorted part in place: sum (or mean). */
function fold(p: Part, mean: boolean): void {
  const n = p.ts.length;
  let w = 0;
  let i = 0;
  while (i < n) {
    const t = p.ts[i]!;
    let sum = p.value[i]!;
    let j = i + 1;
    while (j < n && p.ts[j] === t) sum += p.value[j++]!;
    p.ts[w] = t;
    p.value[w] = mean ? sum / (j - i) : sum;
    w++;
    i = j;
  }
  if (w < n) {
    p.ts = p.ts.slice(0, w);
    p.value = p.value.slice(0, w);
  }
}

