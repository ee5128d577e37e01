/**
 * Engine (SGLang) series (docs/api.md 8.6; sglang fixtures README).
 *
 * Raw rows of one metric → optional dp-rank fold (per scrape tick: SUM, or MEAN for the
 * intensive gauges) → parts by (addr, labels) → derived rates / histogram interval means
 * → stride downsampling. Folding happens BEFORE differencing, so rank counters are summed
 * first and an engine mean is count-weighted. Rows that differ only by labels we drop
 * (e.g. current SGLang's `is_streaming`) land in one fold group and are summed too.
 *
 * The rows come from the collector's files, or — for a run with a Prometheus selector
 * (lib/prometheus; docs/api.md 8.6 "Source: Prometheus") — from Prometheus, folded there
 * in PromQL and returned one point per scrape; the derivations below are the same.
 */
import { lowerBound, upperBound } from "@/lib/bisect";
import { blockParts, cmpStr, ENGINE_MEAN_AGGREGATED_METRICS, filesStamp, partsOf, type EngineMetricColumns, type MetricStore, type Part } from "@/lib/store/telemetry";
import { pickNumbers, strideIndices } from "@/lib/timeline/downsample";
import { SGLANG_HISTORY_METRICS } from "@/lib/store/format";
import type { PromRunSource } from "@/lib/prometheus/source";
import { prometheusSourceFor } from "@/lib/prometheus/server";
import { quantileParts } from "@/lib/prometheus/fold";

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

export { ENGINE_MEAN_AGGREGATED_METRICS };

/**
 * Interval quantiles of histograms (`<base>_p50|_p90|_p99` ← `<base>_bucket`; docs/api.md
 * 8.6 "Source: Prometheus"): only a Prometheus source keeps the buckets, so only there are
 * they listed and answered (the collector's records keep `_sum`/`_count` only).
 */
export const ENGINE_QUANTILE_METRICS: Readonly<Record<string, { base: string; q: number }>> = Object.fromEntries(
  [
    "sglang_time_to_first_token_seconds",
    "sglang_e2e_request_latency_seconds",
    "sglang_kv_transfer_speed_gb_s",
    "sglang_kv_transfer_latency_ms",
    "sglang_kv_transfer_total_mb",
  ].flatMap((base) => [50, 90, 99].map((p) => [`${base}_p${p}`, { base, q: p / 100 }])),
);

const HIDDEN_SUFFIXES = ["_total", "_sum", "_count"];

const ENGINE_NAMES_KEY = "engine.names";

/** Raw metric names present anywhere in the engine stream. */
async function rawMetricNames(store: MetricStore): Promise<Set<string>> {
  const files = await store.engine.files();
  // Every engine partition of the run (without the binary cache, a 1024-GPU day's 8 GB of
  // JSON): kept across restarts for a closed run, so /api/meta does not pay it again (#20).
  const names = await store.keptMemo(ENGINE_NAMES_KEY, filesStamp(files), async () => {
    const blocks = await store.engine.read(files);
    const seen = new Set<string>();
    for (const b of blocks) for (const id of b.metricIds()) seen.add(store.dicts.metrics.values[id]!);
    return [...seen];
  });
  return new Set(names);
}

/**
 * Whether `engineMetricNames` answers without reading more than `maxBytes` of engine JSON:
 * the run is Prometheus-backed, its raw names are held or kept for the current files, or
 * its engine partitions are that small.
 */
export async function engineNamesAtHand(store: MetricStore, maxBytes: number): Promise<boolean> {
  if (await prometheusSourceFor(store)) return true;
  const files = await store.engine.files();
  if (files.reduce((a, f) => a + f.size, 0) <= maxBytes) return true;
  return store.isKept(ENGINE_NAMES_KEY, filesStamp(files));
}

/** Catalog (docs/api.md 8.6): raw names minus cumulative ones, plus derivable names; sorted. */
export async function engineMetricNames(store: MetricStore): Promise<string[]> {
  const prom = await prometheusSourceFor(store);
  const raw = prom ? await promRawNames(prom) : await rawMetricNames(store);
  const out = new Set<string>();
  for (const n of raw) if (!HIDDEN_SUFFIXES.some((s) => n.endsWith(s)) && !n.endsWith("_bucket")) out.add(n);
  for (const [derived, counter] of Object.entries(ENGINE_RATE_METRICS)) if (raw.has(counter)) out.add(derived);
  for (const [derived, base] of Object.entries(ENGINE_MEAN_METRICS))
    if (raw.has(`${base}_sum`) && raw.has(`${base}_count`)) out.add(derived);
  for (const [derived, { base }] of Object.entries(ENGINE_QUANTILE_METRICS)) if (raw.has(`${base}_bucket`)) out.add(derived);
  return [...out].sort(cmpStr);
}

const promNamesMemo = new WeakMap<PromRunSource, { at: number; names: Promise<Set<string>> }>();
const PROM_NAMES_TTL_MS = 10_000;

/**
 * What Prometheus holds for the run, asked at most every PROM_NAMES_TTL_MS. When Prometheus
 * cannot be asked, every name we read is listed, so each panel shows that error itself
 * (docs/api.md 8.6) instead of the whole page failing.
 */
function promRawNames(prom: PromRunSource): Promise<Set<string>> {
  const now = performance.now();
  const hit = promNamesMemo.get(prom);
  if (hit && now - hit.at < PROM_NAMES_TTL_MS) return hit.names;
  const names = prom.rawNames().then(
    (n) => new Set(n),
    () => new Set(SGLANG_HISTORY_METRICS),
  );
  promNamesMemo.set(prom, { at: now, names });
  return names;
}

/**
 * Parts of one raw metric over [t0, t1] (docs/api.md 8.6 "Parts"), sorted by
 * (addr, canonical labels), each sorted by ts. Memoised until the engine stream's files
 * change: the full-window result (docs/api.md 8.1) and, per (metric, per_dp_rank), the most
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
  const files = await store.engine.windowFiles(t0, t1);
  const blocks = await store.engine.read(files);
  const metricId = store.dicts.metrics.lookup(metric);
  if (metricId === undefined) return [];
  const mean = ENGINE_MEAN_AGGREGATED_METRICS.has(metric);
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  const live = blocks.filter((b) => {
    const r = b.metricRange(metricId);
    return r !== null && r.maxTs >= lo && r.minTs <= hi;
  });
  // Hour partitions hold disjoint ts ranges, so the parts of the window are the per-block
  // parts (memoised on each block), sliced to [t0, t1] and concatenated — exactly what
  // one pass over all rows gives, as long as consecutive pieces of a part do not overlap
  // in ts (strictly when folding: a fold group must not span two blocks). The legacy flat
  // file spans all time; then, or when that check fails, take the one-pass path.
  if (files.every((f) => f.hourStart !== null)) {
    const merged = new Map<string, { meta: Part; pieces: [Float64Array, Float64Array][]; last: number }>();
    const perBlock = await Promise.all(live.map((b) => blockParts(store.dicts, b, metricId, perDpRank)));
    let ok = true;
    outer: for (const parts of perBlock) {
      for (const p of parts) {
        const a = lowerBound(p.ts, lo);
        const z = upperBound(p.ts, hi);
        if (z <= a) continue;
        const full = `${p.addr}\u0000${p.key}`;
        let m = merged.get(full);
        if (!m) merged.set(full, (m = { meta: p, pieces: [], last: -Infinity }));
        const first = p.ts[a]!;
        if (perDpRank ? first < m.last : first <= m.last) {
          ok = false;
          break outer;
        }
        m.pieces.push([p.ts.subarray(a, z), p.value.subarray(a, z)]);
        m.last = p.ts[z - 1]!;
      }
    }
    if (ok) {
      const out: Part[] = [];
      for (const { meta, pieces } of merged.values()) {
        let ts: Float64Array;
        let value: Float64Array;
        if (pieces.length === 1 && pieces[0]![0].length === meta.ts.length) [ts, value] = pieces[0]!;
        else {
          let n = 0;
          for (const [x] of pieces) n += x.length;
          ts = new Float64Array(n);
          value = new Float64Array(n);
          let at = 0;
          for (const [x, y] of pieces) {
            ts.set(x, at);
            value.set(y, at);
            at += x.length;
          }
        }
        out.push({ addr: meta.addr, labels: meta.labels, key: meta.key, ts, value });
      }
      out.sort((a, b) => cmpStr(a.addr, b.addr) || cmpStr(a.key, b.key));
      return out;
    }
  }
  await Promise.all(live.map((b) => b.ensureRaw(metricId)));
  const cols = live.map((b) => b.metrics.get(metricId)).filter((c): c is EngineMetricColumns => c !== undefined && c.rows > 0);
  return partsOf(store.dicts, cols, t0, t1, perDpRank, mean);
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

/** `engine_series(metric, t0, t1, max_points, per_dp_rank)` (docs/api.md 8.6). */
export async function engineSeries(
  store: MetricStore,
  metric: string,
  t0: number | null,
  t1: number | null,
  maxPoints: number,
  perDpRank: boolean,
): Promise<EngineSeries[]> {
  // Same folds and derivations whichever source holds the rows (docs/api.md 8.6 "Source").
  const prom = await prometheusSourceFor(store);
  const partsOf = (m: string): Promise<Part[]> =>
    prom ? prom.parts(m, t0, t1, perDpRank, maxPoints, ENGINE_MEAN_AGGREGATED_METRICS.has(m)) : engineParts(store, m, t0, t1, perDpRank);
  let parts: Part[];
  const counter = ENGINE_RATE_METRICS[metric];
  const base = ENGINE_MEAN_METRICS[metric];
  const quantile = ENGINE_QUANTILE_METRICS[metric];
  if (counter !== undefined) {
    parts = (await partsOf(counter)).map(rateOf).filter((p): p is Part => p !== null);
  } else if (quantile !== undefined) {
    parts = prom ? quantileParts(await prom.parts(`${quantile.base}_bucket`, t0, t1, perDpRank, maxPoints, false), quantile.q) : [];
  } else if (base !== undefined) {
    const [sums, counts] = await Promise.all([partsOf(`${base}_sum`), partsOf(`${base}_count`)]);
    const byKey = new Map(counts.map((c) => [`${c.addr}\u0000${c.key}`, c]));
    parts = [];
    for (const s of sums) {
      const c = byKey.get(`${s.addr}\u0000${s.key}`);
      const m = c ? meanOf(s, c) : null;
      if (m) parts.push(m);
    }
  } else {
    // A bucket series alone is not an answer (its quantiles are, above).
    parts = prom && metric.endsWith("_bucket") ? [] : await partsOf(metric);
  }
  let ticks: number[] | null = null;
  return parts.map((p) => {
    const idx = strideIndices(p.ts.length, maxPoints);
    ticks = sameTicks(ticks, p.ts, idx) ?? pickNumbers(p.ts, idx);
    return { addr: p.addr, labels: p.labels, ts: ticks, value: pickNumbers(p.value, idx) };
  });
}

/**
 * `prev` when the series' picked timestamps equal it, else null. Every engine is scraped
 * on the same tick, so the series of an answer mostly carry the same timestamps: they
 * then share one array (no copy per series, and its JSON text is written once and copied,
 * lib/api/json.ts). Answers are read, never changed in place.
 */
function sameTicks(prev: number[] | null, ts: ArrayLike<number>, idx: ArrayLike<number> | null): number[] | null {
  if (prev === null || prev.length !== (idx === null ? ts.length : idx.length)) return null;
  for (let k = 0; k < prev.length; k++) if (ts[idx === null ? k : idx[k]!] !== prev[k]) return null;
  return prev;
}
