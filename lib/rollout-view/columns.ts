/**
 * Column catalogue for the samples and groups tables: which columns exist for this
 * step, which are shown by default, labels and hints. The client-computed `versions`
 * column is part of the catalogue, so it actually renders (the original filtered it out).
 */
import { formatVersions } from "./format";
import type { Cell, GroupRow, SummaryResponse, SummaryRow } from "./types";

/** Default sample columns in order (docs/views.md 4.4), each shown when it exists. */
export const DEFAULT_SAMPLE_COLUMNS = [
  "sample_index",
  "group_index",
  "raw_reward",
  "reward",
  "response_length",
  "truncated",
  "versions",
  "staleness",
  "turns",
  "tool_calls",
  "mean_abs_lp_diff",
  "mean_imp_ratio",
  "mean_entropy",
  "adv_mean",
  "non_generation_time",
] as const;

export const COLUMN_HINTS: Record<string, string> = {
  sample_index: "sample index in the rollout dump",
  group_index: "GRPO group (samples of the same prompt)",
  status: "engine status at the end of the sample",
  remove_sample: "dropped from training (drawn in red)",
  response_length: "response tokens",
  total_length: "prompt + response tokens",
  reward: "reward as recorded by the rollout",
  raw_reward: "reward before normalisation (train dump)",
  normalized_reward: "reward after group normalisation",
  versions: "weight versions the sample was generated with",
  weight_version: "last weight version used",
  weight_version_min: "oldest numeric weight version used",
  mixed_version: "generated across more than one weight version",
  staleness: "step − oldest weight version",
  turns: "generation turns",
  tool_calls: "tool results in the prompt",
  non_generation_time: "seconds spent outside generation (tools, queues)",
  spec_accept_rate: "speculative decoding accept rate",
  prefix_cache_hit_rate: "prefix-cache hit rate",
  truncated: "cut at the length limit",
  dumped_rank: "train rank that dumped the sample",
  mean_entropy: "mean token entropy (loss-masked tokens excluded)",
  max_entropy: "max token entropy",
  ref_entropy_mean: "mean reference-model entropy",
  mean_abs_lp_diff: "mean |train − rollout log-prob|",
  max_abs_lp_diff: "max |train − rollout log-prob|",
  mean_imp_ratio: "mean importance ratio exp(train − rollout log-prob)",
  adv_mean: "mean advantage",
  adv_std: "advantage std",
  return_mean: "mean return",
  alignment_failed: "train/rollout token alignment failed",
  n: "samples in the group",
  reward_mean: "mean reward of the group",
  reward_std: "reward std of the group (0 ⇒ no GRPO signal)",
  response_length_mean: "mean response tokens",
  truncated_frac: "share of truncated samples",
  zero_std: "every sample got the same reward (no gradient signal)",
};

export type SampleTableRow = SummaryRow & { versions: string | null };

/** Rows with the client-computed `versions` column added. */
export function prepareSampleRows(summary: SummaryResponse): SampleTableRow[] {
  return summary.rows.map((r) => ({ ...r, versions: formatVersions(r) }));
}

/** Every column of this step: the server's list with `versions` placed after `weight_version_min`. */
export function sampleColumnIds(summary: SummaryResponse): string[] {
  const cols = summary.columns.filter((c) => c !== "versions");
  if (!cols.includes("weight_version")) return cols;
  const at = cols.indexOf("weight_version_min");
  const i = at >= 0 ? at + 1 : cols.indexOf("weight_version") + 1;
  return [...cols.slice(0, i), "versions", ...cols.slice(i)];
}

export function defaultVisibleSampleColumns(all: readonly string[]): string[] {
  return DEFAULT_SAMPLE_COLUMNS.filter((c) => all.includes(c));
}

export type ColumnKind = "number" | "bool" | "text";

/** The kind of a column from its first non-null value (text when all are null). */
export function columnKind(rows: readonly Record<string, Cell>[], id: string): ColumnKind {
  for (const r of rows) {
    const v = r[id];
    if (v === null || v === undefined) continue;
    if (typeof v === "number") return "number";
    if (typeof v === "boolean") return "bool";
    return "text";
  }
  return "text";
}

/** Rows flagged red: removed samples in the samples table, zero-std groups in the groups table. */
export const isRemovedSample = (r: Record<string, Cell>) => r.remove_sample === true;
export const isZeroStdGroup = (r: GroupRow) => r.zero_std === true && !isSingleSampleGroup(r);

/** A group of one sample (eval steps): its reward std is undefined, not zero. */
export const isSingleSampleGroup = (r: GroupRow) => typeof r.n === "number" && r.n < 2;

/** What a value that does not apply shows (with its reason in a title). */
export const NOT_APPLICABLE = "n/a";
export const EVAL_STALENESS = "staleness is not defined on eval steps: eval samples are generated with the current weights and never trained on";

export const SINGLE_SAMPLE_ZERO_STD = "a group of one sample has no reward spread: zero_std does not apply (no GRPO signal is computed from it)";

/** Group cells that do not apply to their row: zero_std of a group of one. */
export const groupNotApplicable = { zero_std: (r: GroupRow) => (isSingleSampleGroup(r) ? SINGLE_SAMPLE_ZERO_STD : null) };

/** Columns that do not apply to this step, with the reason each cell's title gives. */
export function notApplicableColumns(evaluation: boolean): Record<string, string> {
  return evaluation ? { staleness: EVAL_STALENESS } : {};
}
