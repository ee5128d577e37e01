/**
 * Engine (SGLang) series (api.md 8.6; sglang fixtures README).
 *
 * Raw rows of one metric → optional dp-rank fold (per scrape tick: SUM, or MEAN for the
 * intensive gauges) → parts by (addr, labels) → derived rates / histogram interval means
 * → stride downsampling. Folding happens BEFORE differencing, so rank counters are summed
 * first and an engine mean is count-weighted. Rows that differ only by labels we drop
 * (e.g. current SGLang's `is_streaming`) land in one fold group and are summed too.
 */
import type { MetricStore } from "@/lib/store/telemetry";
import { canonicalLabels, cmpStr } from "@/lib/store/telemetry/blocks";
import { MASK, SHIFT } from "@/lib/store/telemetry/columns";
import { pickNumbers, strideIndices } from "@/lib/timeline/downsample";

export interface EngineSeries {
  addr: string;
  labels: Record<string, string>;
  ts: number[];
  value: number[];
}

export const ENGINE_RATE_METRICS: Readonly<Record<string, string>> = {
  sglang_prompt_tokens_per_s: "sglang_prompt_tokens_total",
  sglang_generation_tokens_per_s: "sglang_generation_tokens_total",
  sglang_requests_per_s: "sglang_num_requests_total",
  sglang_aborted_requests_per_s: "sglang_num_aborted_requests_total",
};

/**
 * Histogram interval means (Δsum/Δcount). The first four are the reference's; the two
 * KV-transfer ones cover current SGLang, where `kv_transfer_{latency_ms,speed_gb_s}` became
 * histograms (fixtures/sglang README) — listed only when their `_sum`/`_count` exist.
 */
export const ENGINE_MEAN_METRICS: Readonly<Record<string, string>> = {
  sglang_ttft_mean_s: "sglang_time_to_first_token_seconds",
  sglang_inter_token_latency_mean_s: "sglang_inter_token_latency_seconds",
  sglang_time_per_output_token_mean_s: "sglang_time_per_output_token_seconds",
  sglang_e2e_latency_mean_s: "sglang_e2e_request_latency_seconds",
  sglang_kv_transfer_latency_mean_ms: "sglang_kv_transfer_latency_ms",
  sglang_kv_transfer_speed_mean_gb_s: "sglang_kv_transfer_speed_gb_s",
};

export const ENGINE_MEAN_AGGREGATED_METRICS: ReadonlySet<string> = new Set([
  "sglang_token_usage",
  "sglang_cache_hit_rate",
  "sglang_kv_transfer_latency_ms",
]);

const HIDDEN_SUFFIXES = ["_total", "_sum", "_count"];

interface Part {
  addr: string;
  labels: Record<string, string>;
  /** canonical labels string (sort key) */
  key: string;
  ts: Float64Array;
  value: Float64Array;
}

/** Raw metric names present anywhere in the engine stream. */
async function rawMetricNames(store: MetricStore): Promise<Set<string>> {
  const files = await store.engine.files();
  const version = store.engine.signature;
  return store.memo("engine:names", version, async () => {
    const blocks = await store.engine.read(files);
    const names = new Set<string>();
    for (const b of blocks)
      for (const [id, cols] of b.metrics) if (cols.rows > 0) names.add(store.dicts.metrics.values[id]!);
    return names;
  });
}

/** Catalog (api.md 8.6): raw names minus cumulative ones, plus derivable names; sorted. */
export async function engineMetricNames(store: MetricStore): Promise<string[]> {
  const raw = await rawMetricNames(store);
  const out = new Set<string>();
  for (const n of raw) if (!HIDDEN_SUFFIXES.some((s) => n.endsWith(s))) out.add(n);
  for (const [derived, counter] of Object.entries(ENGINE_RATE_METRICS)) if (raw.has(counter)) out.add(derived);
  for (const [derived, base] of Object.entries(ENGINE_MEAN_METRICS))
    if (raw.has(`${base}_sum`) && raw.has(`${base}_count`)) out.add(derived);
  return [...out].sort(cmpStr);
}

function withoutNulls(labels: Record<string, string | null>, dropDp: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in labels) {
    const v = labels[k];
    if (v === null || v === undefined || (dropDp && k === "dp_rank")) continue;
    out[k] = v;
  }
  return out;
}

/**
 * Parts of one raw metric over [t0, t1] (api.md 8.6 "Parts"), sorted by
 * (addr, canonical labels), each sorted by ts. Memoised until the engine stream's files
 * change: the full-window result (api.md 8.1) and, per (metric, per_dp_rank), the most
 * recent window (dashboards and the advisory re-ask the same window).
 */
export async function engineParts(
  store: MetricStore,
  metric: string,
  t0: number | null,
  t1: number | null,
  perDpRank: boolean,
): Promise<Part[]> {
  await store.engine.files();
  const full = t0 === null && t1 === null;
  const key = `engine:parts:${full ? "full" : "window"}:${metric}:${perDpRank}`;
  return store.memo(key, `${store.engine.signature}|${t0}|${t1}`, () => computeParts(store, metric, t0, t1, perDpRank));
}

async function computeParts(
  store: MetricStore,
  metric: string,
  t0: number | null,
  t1: number | null,
  perDpRank: boolean,
): Promise<Part[]> {
  const blocks = await store.engine.window(t0, t1);
  const metricId = store.dicts.metrics.lookup(metric);
  if (metricId === undefined) return [];
  const d = store.dicts;
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  const cols = blocks
    .map((b) => b.metrics.get(metricId))
    .filter((c): c is NonNullable<typeof c> => c !== undefined && c.rows > 0 && c.maxTs >= lo && c.minTs <= hi);
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
  const parts: Part[] = meta.map((m, i) => ({ ...m, ts: new Float64Array(counts[i]!), value: new Float64Array(counts[i]!) }));
  const fill = new Int32Array(parts.length);
  const sorted = new Uint8Array(parts.length).fill(1);
  for (const col of cols) {
    const [g0, g1] = col.groupRange(t0, t1);
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
  const mean = ENGINE_MEAN_AGGREGATED_METRICS.has(metric);
  const out = parts.filter((p) => p.ts.length > 0);
  parts.forEach((p, i) => {
    if (!sorted[i]) sortPart(p);
    if (!perDpRank) fold(p, mean);
  });
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

function rateOf(p: Part): Part | null {
  if (p.ts.length < 2) return null;
  const ts: number[] = [];
  const value: number[] = [];
  for (let i = 1; i < p.ts.length; i++) {
    const d = p.value[i]! - p.value[i - 1]!;
    const dt = p.ts[i]! - p.ts[i - 1]!;
    if (d >= 0 && dt > 0) {
      ts.push(p.ts[i]!);
      value.push(d / dt);
    }
  }
  return ts.length ? { ...p, ts: Float64Array.from(ts), value: Float64Array.from(value) } : null;
}

/** First-occurrence values at each distinct ts of a ts-sorted part. */
function distinct(p: Part): { ts: number[]; value: number[] } {
  const ts: number[] = [];
  const value: number[] = [];
  for (let i = 0; i < p.ts.length; i++) {
    if (i > 0 && p.ts[i] === p.ts[i - 1]) continue;
    ts.push(p.ts[i]!);
    value.push(p.value[i]!);
  }
  return { ts, value };
}

function meanOf(sum: Part, count: Part): Part | null {
  const s = distinct(sum);
  const c = distinct(count);
  const at: number[] = [];
  const sv: number[] = [];
  const cv: number[] = [];
  let i = 0;
  let j = 0;
  while (i < s.ts.length && j < c.ts.length) {
    const a = s.ts[i]!;
    const b = c.ts[j]!;
    if (a < b) i++;
    else if (b < a) j++;
    else {
      at.push(a);
      sv.push(s.value[i++]!);
      cv.push(c.value[j++]!);
    }
  }
  const ts: number[] = [];
  const value: number[] = [];
  for (let k = 1; k < at.length; k++) {
    const dSum = sv[k]! - sv[k - 1]!;
    const dCount = cv[k]! - cv[k - 1]!;
    if (dSum >= 0 && dCount > 0) {
      ts.push(at[k]!);
      value.push(dSum / dCount);
    }
  }
  return ts.length ? { ...sum, ts: Float64Array.from(ts), value: Float64Array.from(value) } : null;
}

/** `engine_series(metric, t0, t1, max_points, per_dp_rank)` (api.md 8.6). */
export async function engineSeries(
  store: MetricStore,
  metric: string,
  t0: number | null,
  t1: number | null,
  maxPoints: number,
  perDpRank: boolean,
): Promise<EngineSeries[]> {
  let parts: Part[];
  const counter = ENGINE_RATE_METRICS[metric];
  const base = ENGINE_MEAN_METRICS[metric];
  if (counter !== undefined) {
    parts = (await engineParts(store, counter, t0, t1, perDpRank)).map(rateOf).filter((p): p is Part => p !== null);
  } else if (base !== undefined) {
    const [sums, counts] = await Promise.all([
      engineParts(store, `${base}_sum`, t0, t1, perDpRank),
      engineParts(store, `${base}_count`, t0, t1, perDpRank),
    ]);
    const byKey = new Map(counts.map((c) => [`${c.addr}\u0000${c.key}`, c]));
    parts = [];
    for (const s of sums) {
      const c = byKey.get(`${s.addr}\u0000${s.key}`);
      const m = c ? meanOf(s, c) : null;
      if (m) parts.push(m);
    }
  } else {
    parts = await engineParts(store, metric, t0, t1, perDpRank);
  }
  return parts.map((p) => {
    const idx = strideIndices(p.ts.length, maxPoints);
    return { addr: p.addr, labels: p.labels, ts: pickNumbers(p.ts, idx), value: pickNumbers(p.value, idx) };
  });
}
