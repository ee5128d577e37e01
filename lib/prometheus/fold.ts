/**
 * From Prometheus matrices to engine-series parts (docs/api.md 8.6 "Source: Prometheus"),
 * and interval quantiles of summed histogram buckets. Pure.
 *
 * A step point of a range query repeats the newest sample until the next scrape; pairing
 * each folded value with the scrape time of its sample (the `timestamp()` query) and
 * keeping the first point of each scrape turns the step grid back into one point per
 * scrape at the scrape's own time — what the collector's files hold — so rates and means
 * are derived by the very same rules (lib/timeline/engine.ts).
 */
import type { Part } from "@/lib/store/telemetry";
import { canonicalLabels, cmpStr } from "@/lib/store/telemetry/blocks";
import type { MatrixSeries } from "@/lib/prometheus/client";

/** A part, plus the bucket bound when it is one `le` series of a histogram. */
export interface PromPart extends Part {
  le?: number;
}

/** The engine address of a series: the router's `worker_addr`, else `http://` + instance. */
export function engineAddr(metric: Record<string, string>): string {
  if (metric.worker_addr) return metric.worker_addr;
  const inst = metric.instance ?? "";
  return inst === "" || /^[a-z]+:\/\//i.test(inst) ? inst : `http://${inst}`;
}

/** The collector's kept labels in its (text) order: SGLang and the router print labels sorted. */
const KEPT = ["dp_rank", "engine_type"] as const;

function leOf(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  if (s === "+Inf" || s === "Inf") return Infinity;
  const v = Number(s);
  return Number.isNaN(v) ? undefined : v;
}

/**
 * Pair the folded values with their sample times (same label sets) and keep one point per
 * scrape (the first step point that saw it), sorted by (addr, canonical labels[, le]).
 */
export function partsFromMatrices(values: readonly MatrixSeries[], stamps: readonly MatrixSeries[]): PromPart[] {
  const keyOf = (m: Record<string, string>) => JSON.stringify([m.instance ?? "", m.worker_addr ?? "", m.engine_type ?? null, m.dp_rank ?? null, m.le ?? null]);
  const stampBy = new Map(stamps.map((s) => [keyOf(s.metric), s]));
  // Per-target stamps (`max by (instance) (timestamp(up …))`): every sample of one scrape
  // carries the scrape's time, so the target's `up` dates them all.
  const byTarget = new Map(stamps.filter((s) => Object.keys(s.metric).length === 1 && s.metric.instance !== undefined).map((s) => [s.metric.instance!, s]));
  const out: PromPart[] = [];
  for (const v of values) {
    const st = stampBy.get(keyOf(v.metric)) ?? byTarget.get(v.metric.instance ?? "");
    if (!st) continue;
    const at = new Map<number, number>();
    for (let i = 0; i < st.ts.length; i++) at.set(st.ts[i]!, st.value[i]!);
    const ts: number[] = [];
    const value: number[] = [];
    let last = -Infinity;
    for (let i = 0; i < v.ts.length; i++) {
      const sampleTs = at.get(v.ts[i]!);
      if (sampleTs === undefined || !Number.isFinite(sampleTs) || sampleTs <= last) continue;
      ts.push(sampleTs);
      value.push(v.value[i]!);
      last = sampleTs;
    }
    if (ts.length === 0) continue;
    const labels: Record<string, string> = {};
    for (const k of KEPT) if (v.metric[k] !== undefined) labels[k] = v.metric[k]!;
    const le = leOf(v.metric.le);
    out.push({
      addr: engineAddr(v.metric),
      labels,
      key: canonicalLabels(labels),
      ts: Float64Array.from(ts),
      value: Float64Array.from(value),
      ...(le === undefined ? {} : { le }),
    });
  }
  out.sort((a, b) => cmpStr(a.addr, b.addr) || cmpStr(a.key, b.key) || (a.le ?? 0) - (b.le ?? 0));
  return out;
}

export interface Bucket {
  upper: number;
  count: number;
}

/**
 * Prometheus' `histogram_quantile` on one set of cumulative buckets (sorted by upper
 * bound, the last +Inf): linear interpolation inside the bucket holding rank q·total, the
 * lower edge of the first bucket 0 (when its upper bound is positive), the highest finite
 * bound when the rank falls into +Inf. NaN without a +Inf bucket or with no observations.
 */
export function bucketQuantile(q: number, input: readonly Bucket[]): number {
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const buckets = [...input].sort((a, b) => a.upper - b.upper);
  if (buckets.length < 2 || buckets[buckets.length - 1]!.upper !== Infinity) return NaN;
  // Cumulative counts must not decrease (float noise, scrape races): Prometheus' own fix.
  for (let i = 1; i < buckets.length; i++) if (buckets[i]!.count < buckets[i - 1]!.count) buckets[i] = { ...buckets[i]!, count: buckets[i - 1]!.count };
  const total = buckets[buckets.length - 1]!.count;
  if (!(total > 0)) return NaN;
  let rank = q * total;
  let b = buckets.length - 1;
  for (let i = 0; i < buckets.length - 1; i++)
    if (buckets[i]!.count >= rank) {
      b = i;
      break;
    }
  if (b === buckets.length - 1) return buckets[buckets.length - 2]!.upper;
  if (b === 0 && buckets[0]!.upper <= 0) return buckets[0]!.upper;
  const start = b === 0 ? 0 : buckets[b - 1]!.upper;
  const end = buckets[b]!.upper;
  const before = b === 0 ? 0 : buckets[b - 1]!.count;
  const count = buckets[b]!.count - before;
  rank -= before;
  return count > 0 ? start + (end - start) * (rank / count) : start;
}

/**
 * Interval quantiles from the folded `_bucket` parts (one per `le`) of each (addr, labels):
 * on the scrape times all buckets share, Δ of every bucket between consecutive scrapes,
 * then `bucketQuantile` of those Δs at the interval END. An interval with no observation,
 * or where a bucket went down (a restart), is a gap — like the means of 8.6.
 */
export function quantileParts(buckets: readonly PromPart[], q: number): Part[] {
  const groups = new Map<string, PromPart[]>();
  for (const p of buckets) {
    if (p.le === undefined) continue;
    const k = `${p.addr}\u0000${p.key}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(p);
  }
  const out: Part[] = [];
  for (const g of groups.values()) {
    g.sort((a, b) => a.le! - b.le!);
    if (g[g.length - 1]!.le !== Infinity) continue;
    // Shared scrape times (every bucket of a histogram comes from the same scrape).
    let shared: number[] = Array.from(g[0]!.ts);
    for (const p of g.slice(1)) {
      const has = new Set(p.ts);
      shared = shared.filter((t) => has.has(t));
    }
    if (shared.length < 2) continue;
    const cols = g.map((p) => {
      const at = new Map<number, number>();
      for (let i = 0; i < p.ts.length; i++) if (!at.has(p.ts[i]!)) at.set(p.ts[i]!, p.value[i]!);
      return shared.map((t) => at.get(t)!);
    });
    const ts: number[] = [];
    const value: number[] = [];
    for (let k = 1; k < shared.length; k++) {
      const deltas: Bucket[] = [];
      let reset = false;
      for (let j = 0; j < g.length; j++) {
        const d = cols[j]![k]! - cols[j]![k - 1]!;
        if (!(d >= 0)) reset = true;
        deltas.push({ upper: g[j]!.le!, count: d });
      }
      if (reset) continue;
      const v = bucketQuantile(q, deltas);
      if (Number.isNaN(v)) continue;
      ts.push(shared[k]!);
      value.push(v);
    }
    if (ts.length === 0) continue;
    const first = g[0]!;
    out.push({ addr: first.addr, labels: first.labels, key: first.key, ts: Float64Array.from(ts), value: Float64Array.from(value) });
  }
  out.sort((a, b) => cmpStr(a.addr, b.addr) || cmpStr(a.key, b.key));
  return out;
}
