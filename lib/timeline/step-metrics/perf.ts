/**
 * The `perf/*` request-timing family (docs/api.md 9.2 "derived metrics"): per train
 * step, slime's request metrics from the samples' traces (lib/rollout/perf.ts has the
 * rule), x = the rollout id, ts = the step's last request end. Each step is computed
 * once per dump file version (the reader's trace digest); a run whose dumps carry no
 * traces (checked on its first step) reads the requests stream instead (miles,
 * docs/formats.md §4.14) through the same aggregation, and lists nothing without one.
 */
import { aggregatePerf, parseTrace, PERF_KEYS, traceRequests, tracesFromRequests, type RequestAttrs } from "@/lib/rollout/perf";
import { listRequestSteps, readStepRequests, type MetricStore } from "@/lib/store/telemetry";
import type { DumpSource, StepTraces } from "@/lib/timeline/dump-source";
import type { MetricSeries } from "@/lib/timeline/metrics";
import type { StepMetricFamily, StepMetricInput } from "./index";

export interface StepPerf {
  rollout_id: number;
  /** Newest request end of the step (epoch s), or 0 when none. */
  ts: number;
  values: Record<string, number>;
}

/** The requests of a step's traces (samples without a trace contribute none). */
export function stepRequests(t: StepTraces): RequestAttrs[] {
  const out: RequestAttrs[] = [];
  for (const s of t.samples) {
    const trace = parseTrace(s.trace);
    if (trace) out.push(...traceRequests(trace));
  }
  return out;
}

export function stepPerf(t: StepTraces): StepPerf {
  const requests = stepRequests(t);
  let ts = 0;
  for (const r of requests) if (r.end !== null && r.end > ts) ts = r.end;
  return { rollout_id: t.rollout_id, ts, values: t.has_traces ? aggregatePerf(requests) : {} };
}

const DIGEST = "perf.v1";

/** From the dumps' traces when they have any, else from the requests stream (miles). */
async function perfSteps({ store, dumps }: StepMetricInput): Promise<StepPerf[]> {
  const fromDumps = await dumpPerfSteps(dumps);
  return fromDumps.length ? fromDumps : streamPerfSteps(store);
}

async function streamPerfSteps(store: MetricStore): Promise<StepPerf[]> {
  const fs = (store as Partial<MetricStore>).fs;
  if (!fs) return [];
  const { train } = await listRequestSteps(fs);
  const out: StepPerf[] = [];
  for (const rolloutId of train) {
    const records = await readStepRequests(fs, rolloutId, false).catch(() => null);
    if (records?.length) out.push(stepPerf(tracesFromRequests(records, rolloutId, false, `dashboard/requests/${rolloutId}.jsonl`)));
  }
  return out;
}

async function dumpPerfSteps(dumps: DumpSource): Promise<StepPerf[]> {
  if (!dumps.traceDigest) return [];
  const digest = dumps.traceDigest.bind(dumps);
  const { train } = await dumps.listRolloutIds();
  if (!train.length) return [];
  const first = await digest(train[0]!, DIGEST, stepPerf).catch(() => null);
  if (first && !Object.keys(first.values).length) return [];
  const out: StepPerf[] = [];
  for (const rolloutId of train) {
    // A step that does not load (still writing, corrupt) is left out, as for dump/*.
    const p = rolloutId === train[0] && first ? first : await digest(rolloutId, DIGEST, stepPerf).catch(() => null);
    if (p) out.push(p);
  }
  return out;
}

export const perfFamily: StepMetricFamily = {
  name: "perf",
  owns: (key) => PERF_KEYS.has(key),
  async keys(input: StepMetricInput) {
    const keys = new Set<string>();
    for (const s of await perfSteps(input)) for (const k in s.values) keys.add(k);
    return [...keys].sort();
  },
  async series(input: StepMetricInput, keys: readonly string[]) {
    const steps = await perfSteps(input);
    const out: Record<string, MetricSeries> = {};
    for (const k of keys) {
      const s: MetricSeries = { x: [], y: [], ts: [] };
      for (const p of steps) {
        const v = p.values[k];
        if (v === undefined) continue;
        s.x.push(p.rollout_id);
        s.y.push(v);
        s.ts.push(p.ts);
      }
      out[k] = s;
    }
    return out;
  },
};
