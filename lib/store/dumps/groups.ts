/**
 * Group aggregates of one rollout (docs/api.md 4.1) and the per-step `dump/*` aggregates
 * (4.2). These follow polars semantics: float64, nulls skipped, NaN propagates, sample
 * std with ddof 1 and null below two values.
 */
import { boolToNum, meanSkipNull, stdSkipNull } from "./stats";
import type { SummaryRow } from "./summary";

export const GROUP_COLUMNS = [
  "group_index",
  "n",
  "reward_mean",
  "reward_std",
  "response_length_mean",
  "truncated_frac",
  "zero_std",
] as const;

export type GroupRow = {
  group_index: number | null;
  n: number;
  reward_mean: number | null;
  reward_std: number | null;
  response_length_mean: number | null;
  truncated_frac: number | null;
  zero_std: boolean;
};

export function buildGroups(rows: readonly SummaryRow[], evaluation: boolean): GroupRow[] {
  const rewardCol = evaluation ? "reward" : "raw_reward";
  const byGroup = new Map<number | null, SummaryRow[]>();
  for (const r of rows) {
    let list = byGroup.get(r.group_index);
    if (!list) byGroup.set(r.group_index, (list = []));
    list.push(r);
  }
  const keys = [...byGroup.keys()].sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b));
  return keys.map((key) => {
    const g = byGroup.get(key) as SummaryRow[];
    const rewards = g.map((r) => r[rewardCol]);
    const mean = meanSkipNull(rewards);
    const std = stdSkipNull(rewards);
    return {
      group_index: key,
      n: g.length,
      reward_mean: mean,
      reward_std: std,
      response_length_mean: meanSkipNull(g.map((r) => r.response_length)),
      truncated_frac: meanSkipNull(g.map((r) => boolToNum(r.truncated))),
      zero_std: mean !== null && (std ?? 0.0) <= 1e-12,
    };
  });
}

export const DUMP_METRIC_PREFIX = "dump/";

/** The step aggregates exposed as `dump/<column>` metrics, in catalog order. */
export const STEP_AGGREGATE_METRICS = [
  "reward_mean",
  "reward_std",
  "response_length_mean",
  "truncated_frac",
  "zero_std_group_frac",
  "mean_abs_lp_diff",
  "mean_entropy",
  "mixed_version_frac",
] as const;
export type StepAggregateMetric = (typeof STEP_AGGREGATE_METRICS)[number];

export type StepAggregateRow = {
  rollout_id: number;
  n_samples: number;
  reward_mean: number | null;
  reward_std: number | null;
  response_length_mean: number | null;
  truncated_frac: number | null;
  zero_std_group_frac: number | null;
  mean_abs_lp_diff: number | null;
  mean_entropy: number | null;
  mixed_version_frac: number | null;
};

export function stepAggregate(rolloutId: number, rows: readonly SummaryRow[], groups: readonly GroupRow[]): StepAggregateRow {
  const rr = rows.map((r) => r.raw_reward);
  return {
    rollout_id: rolloutId,
    n_samples: rows.length,
    reward_mean: meanSkipNull(rr),
    reward_std: stdSkipNull(rr),
    response_length_mean: meanSkipNull(rows.map((r) => r.response_length)),
    truncated_frac: meanSkipNull(rows.map((r) => boolToNum(r.truncated))),
    zero_std_group_frac: meanSkipNull(groups.map((g) => (g.zero_std ? 1 : 0))),
    mean_abs_lp_diff: meanSkipNull(rows.map((r) => r.mean_abs_lp_diff)),
    mean_entropy: meanSkipNull(rows.map((r) => r.mean_entropy)),
    mixed_version_frac: meanSkipNull(rows.map((r) => boolToNum(r.mixed_version))),
  };
}
