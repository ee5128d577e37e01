/**
 * Scalar metrics (docs/api.md 8.2, 8.11 bubbles, 9.2 /api/metrics incl. the `dump/*` keys
 * computed by the dump reader).
 */
import { badRequest } from "@/lib/contracts/errors";
import { cmpStr, type MetricStore, type Scalar } from "@/lib/store/telemetry";
import { DUMP_METRIC_PREFIX, STEP_AGGREGATE_METRICS, type DumpSource } from "@/lib/timeline/dump-source";
import { derivedMetricSeries, familyOf, STEP_METRIC_FAMILIES, type StepMetricFamily } from "@/lib/timeline/step-metrics";

export interface MetricSeries {
  x: (number | null)[];
  y: Scalar[];
  ts: number[];
}

export async function metricKeys(store: MetricStore): Promise<string[]> {
  const keys = new Set<string>();
  for (const r of await store.metrics()) for (const k in r.metrics) keys.add(k);
  return [...keys].sort(cmpStr);
}

export async function stepKeys(store: MetricStore): Promise<string[]> {
  const keys = new Set<string>();
  for (const r of await store.metrics()) if (r.step_key !== null) keys.add(r.step_key);
  return [...keys].sort(cmpStr);
}

export async function metricSeries(
  store: MetricStore,
  keys: readonly string[],
  xKey: string,
  t0: number | null,
  t1: number | null,
): Promise<Record<string, MetricSeries>> {
  const out: Record<string, MetricSeries> = {};
  for (const k of keys) out[k] = { x: [], y: [], ts: [] };
  for (const r of await store.metrics()) {
    if (r.step_key !== xKey || (t0 !== null && r.ts < t0) || (t1 !== null && r.ts > t1)) continue;
    for (const k of keys) {
      if (!Object.hasOwn(r.metrics, k)) continue;
      const s = out[k]!;
      s.x.push(r.step);
      s.y.push(r.metrics[k]!);
      s.ts.push(r.ts);
    }
  }
  return out;
}

export async function latestDataBufferLength(store: MetricStore): Promise<number | null> {
  const rows = await store.dataBuffer();
  return rows.length ? rows[rows.length - 1]!.length : null;
}

export interface Bubble {
  step: number | null;
  ts: number;
  step_time: Scalar;
  wait_ratio: Scalar;
}

export async function bubbles(store: MetricStore): Promise<Bubble[]> {
  const out: Bubble[] = [];
  for (const r of await store.metrics()) {
    if (r.step_key !== "rollout/step") continue;
    const st = r.metrics["perf/step_time"] ?? null;
    const wr = r.metrics["perf/wait_time_ratio"] ?? null;
    if (st === null && wr === null) continue;
    out.push({ step: r.step, ts: r.ts, step_time: st, wait_ratio: wr });
  }
  return out;
}

/** `GET /api/metrics` body. */
export async function getMetrics(
  store: MetricStore,
  dumps: DumpSource,
  q: { keys: string; x: string; t0: number | null; t1: number | null },
  families: readonly StepMetricFamily[] = STEP_METRIC_FAMILIES,
): Promise<Record<string, MetricSeries>> {
  const keys = q.keys.split(",").filter((k) => k !== "");
  if (keys.length === 0) throw badRequest("keys must be a non-empty comma-separated list");
  const derivedKeys = keys.filter((k) => !k.startsWith(DUMP_METRIC_PREFIX) && familyOf(k, families) !== null);
  const storeKeys = keys.filter((k) => !k.startsWith(DUMP_METRIC_PREFIX) && familyOf(k, families) === null);
  const dumpKeys = keys.filter((k) => k.startsWith(DUMP_METRIC_PREFIX));
  const out = await metricSeries(store, storeKeys, q.x, q.t0, q.t1);
  if (derivedKeys.length) Object.assign(out, await derivedMetricSeries({ store, dumps }, derivedKeys, families));
  if (dumpKeys.length) {
    const rows = await dumps.stepAggregates();
    for (const key of dumpKeys) {
      const col = key.slice(DUMP_METRIC_PREFIX.length);
      if (!(STEP_AGGREGATE_METRICS as readonly string[]).includes(col)) throw badRequest(`unknown dump metric '${key}'`);
      const s: MetricSeries = { x: [], y: [], ts: [] };
      for (const r of rows) {
        const v = r[col as keyof typeof r];
        if (v === null || v === undefined) continue;
        s.x.push(r.rollout_id);
        s.y.push(v);
      }
      out[key] = s;
    }
  }
  return out;
}
