/**
 * `drift/*` and `staleness/*` derived per-step metrics (docs/api.md 9.2 "derived
 * metrics", docs/views.md 4.6): per train step, quantiles of |lp_diff| over the
 * loss-masked tokens and the fraction of importance ratios outside the default clip
 * [0.8, 1.25] (lib/rollout/drift.ts), and the sample / token-weighted staleness of the
 * summary (lib/rollout/staleness.ts). x = rollout id, ts = 0. A step whose dumps do not
 * load, or which has no value (no rollout_log_probs, no weight versions), has no point.
 */
import { getStepQuantiles, hasDriftSupport, type StepQuantiles } from "@/lib/rollout/drift";
import { computeStaleness, type StalenessAnswer } from "@/lib/rollout/staleness";
import type { SummaryRow } from "@/lib/store/dumps";
import type { MetricSeries } from "@/lib/timeline/metrics";
import type { StepMetricFamily, StepMetricInput } from "./index";

export const DRIFT_METRIC_KEYS = ["drift/abs_lp_diff/p50", "drift/abs_lp_diff/p90", "drift/abs_lp_diff/p99", "drift/clip_frac"] as const;
export const STALENESS_METRIC_KEYS = ["staleness/max", "staleness/mean", "staleness/token_weighted_mean"] as const;

const DRIFT_VALUE: Record<(typeof DRIFT_METRIC_KEYS)[number], (q: StepQuantiles) => number | null> = {
  "drift/abs_lp_diff/p50": (q) => q.p50,
  "drift/abs_lp_diff/p90": (q) => q.p90,
  "drift/abs_lp_diff/p99": (q) => q.p99,
  "drift/clip_frac": (q) => q.clip_frac,
};
const STALENESS_VALUE: Record<(typeof STALENESS_METRIC_KEYS)[number], (s: StalenessAnswer) => number | null> = {
  "staleness/max": (s) => s.max,
  "staleness/mean": (s) => s.mean,
  "staleness/token_weighted_mean": (s) => s.token_weighted_mean,
};

const isDrift = (k: string): k is (typeof DRIFT_METRIC_KEYS)[number] => (DRIFT_METRIC_KEYS as readonly string[]).includes(k);
const isStaleness = (k: string): k is (typeof STALENESS_METRIC_KEYS)[number] => (STALENESS_METRIC_KEYS as readonly string[]).includes(k);

export const driftFamily: StepMetricFamily = {
  name: "drift",
  owns: (key) => key.startsWith("drift/") || key.startsWith("staleness/"),
  async keys({ dumps }: StepMetricInput) {
    // A source without the per-step derived cache (test fakes) lists nothing.
    if (!hasDriftSupport(dumps)) return [];
    // Steps the trainer consumed have train shards (rollout-only runs, e.g. slime debug
    // dumps, have neither train log-probs nor a consuming trainer version).
    const { train } = await dumps.listRolloutIds();
    const newest = train[train.length - 1];
    if (newest === undefined || !(await dumps.hasTrainShards(newest))) return [];
    return [...DRIFT_METRIC_KEYS, ...STALENESS_METRIC_KEYS];
  },
  async series({ dumps }: StepMetricInput, keys: readonly string[]) {
    const out: Record<string, MetricSeries> = {};
    for (const k of keys) out[k] = { x: [], y: [], ts: [] };
    const wantDrift = keys.some(isDrift) && hasDriftSupport(dumps);
    const wantStale = keys.some(isStaleness);
    const { train } = await dumps.listRolloutIds();
    for (const rolloutId of train) {
      if (wantDrift && hasDriftSupport(dumps)) {
        const q = await getStepQuantiles(dumps, rolloutId).catch(() => null);
        if (q) for (const k of keys) if (isDrift(k)) push(out[k] as MetricSeries, rolloutId, DRIFT_VALUE[k](q));
      }
      if (wantStale) {
        const table = await dumps.summary(rolloutId, false).catch(() => null);
        if (table) {
          const s = computeStaleness(table.rows as SummaryRow[], false);
          for (const k of keys) if (isStaleness(k)) push(out[k] as MetricSeries, rolloutId, STALENESS_VALUE[k](s));
        }
      }
    }
    return out;
  },
};

function push(s: MetricSeries, x: number, y: number | null): void {
  if (y === null || !Number.isFinite(y)) return;
  s.x.push(x);
  s.y.push(y);
  s.ts.push(0);
}
