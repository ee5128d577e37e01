/**
 * Per-step metric families derived from the run's files rather than logged by the trainer
 * (docs/api.md 9.2 "derived metrics"): e.g. `drift/*` quantiles from the dumps' per-token
 * log-probs, slime's `perf/*` request timing from the samples' traces. Each family owns a
 * set of keys, lists what it can serve for a run and answers `/api/metrics` series with
 * x = the rollout id, like the `dump/*` aggregates.
 *
 * Listing rule (keeps `/api/meta` byte-equal to the original on the runs it knows): a run
 * with a metrics stream lists family keys in the additive `derived_metric_keys`; a run
 * without one (offline, dump-only, slime) lists them in `metric_keys` as well.
 */
import type { MetricStore } from "@/lib/store/telemetry";
import type { DumpSource } from "@/lib/timeline/dump-source";
import type { MetricSeries } from "@/lib/timeline/metrics";
import { perfFamily } from "./perf";
import { driftFamily } from "./drift";

export interface StepMetricInput {
  store: MetricStore;
  dumps: DumpSource;
}

export interface StepMetricFamily {
  /** Short name for errors and docs, e.g. "drift". */
  readonly name: string;
  /** True for every key this family answers (a prefix test; families never overlap). */
  owns(key: string): boolean;
  /** Keys this family can serve for the run, sorted; [] when its inputs are absent. */
  keys(input: StepMetricInput): Promise<string[]>;
  /** One series per requested key (all owned by this family); x = rollout id, ts = 0 when unknown. */
  series(input: StepMetricInput, keys: readonly string[]): Promise<Record<string, MetricSeries>>;
}

/**
 * The registered families, in listing order. Each family lives in its own file in this
 * folder and adds one line here.
 */
export const STEP_METRIC_FAMILIES: readonly StepMetricFamily[] = [perfFamily, driftFamily];

export function familyOf(key: string, families: readonly StepMetricFamily[] = STEP_METRIC_FAMILIES): StepMetricFamily | null {
  for (const f of families) if (f.owns(key)) return f;
  return null;
}

/** Every family's keys for the run, in family order. A family that fails lists nothing. */
export async function derivedMetricKeys(
  input: StepMetricInput,
  families: readonly StepMetricFamily[] = STEP_METRIC_FAMILIES,
): Promise<string[]> {
  const lists = await Promise.all(families.map((f) => f.keys(input).catch(() => [] as string[])));
  return lists.flat();
}

/** Series for the requested derived keys, grouped per family (one call each). */
export async function derivedMetricSeries(
  input: StepMetricInput,
  keys: readonly string[],
  families: readonly StepMetricFamily[] = STEP_METRIC_FAMILIES,
): Promise<Record<string, MetricSeries>> {
  const byFamily = new Map<StepMetricFamily, string[]>();
  for (const k of keys) {
    const f = familyOf(k, families);
    if (f) byFamily.set(f, [...(byFamily.get(f) ?? []), k]);
  }
  const out: Record<string, MetricSeries> = {};
  for (const [f, ks] of byFamily) Object.assign(out, await f.series(input, ks));
  return out;
}
