/**
 * L1 per-sample summary rows (spec api.md 3) as pure functions over SampleRecords and
 * TrainRows. Train-side statistics only ever see loss-masked tokens, in float32.
 */
import { diffF32, mapF32, maskedF32, maxF32, meanF32, stdF32 } from "./stats";
import type { SampleRecord, TrainRow } from "./types";

/** Bump whenever a summary column or formula changes (invalidates the summary cache). */
export const SUMMARY_VERSION = 4;

export const BASE_COLUMNS = [
  "sample_index",
  "group_index",
  "status",
  "remove_sample",
  "response_length",
  "total_length",
  "reward",
  "weight_version",
  "weight_version_min",
  "mixed_version",
  "staleness",
  "turns",
  "tool_calls",
  "non_generation_time",
  "spec_accept_rate",
  "prefix_cache_hit_rate",
] as const;

const STAT_COLUMNS = [
  "mean_entropy",
  "max_entropy",
  "ref_entropy_mean",
  "mean_abs_lp_diff",
  "max_abs_lp_diff",
  "mean_imp_ratio",
  "adv_mean",
  "adv_std",
  "return_mean",
] as const;

/** Column order when the first sample has a TrainRow (3.3). */
export const TRAIN_COLUMNS = [
  ...BASE_COLUMNS,
  "raw_reward",
  "normalized_reward",
  "truncated",
  "dumped_rank",
  ...STAT_COLUMNS,
  "alignment_failed",
] as const;

/** Column order when the first sample has no TrainRow (eval dumps). */
export const NO_TRAIN_COLUMNS = [
  ...BASE_COLUMNS,
  "raw_reward",
  "normalized_reward",
  "dumped_rank",
  ...STAT_COLUMNS,
  "alignment_failed",
  "truncated",
] as const;

export type SummaryColumn = (typeof TRAIN_COLUMNS)[number];

/** A type alias (not an interface) so rows are assignable to `Record<string, unknown>`. */
export type SummaryRow = {
  sample_index: number | null;
  group_index: number | null;
  status: string;
  remove_sample: boolean;
  response_length: number;
  total_length: number;
  reward: number | null;
  weight_version: string | null;
  weight_version_min: number | null;
  mixed_version: boolean | null;
  staleness: number | null;
  turns: number | null;
  tool_calls: number | null;
  non_generation_time: number;
  spec_accept_rate: number | null;
  prefix_cache_hit_rate: number | null;
  raw_reward: number | null;
  normalized_reward: number | null;
  truncated: boolean;
  dumped_rank: number | null;
  mean_entropy: number | null;
  max_entropy: number | null;
  ref_entropy_mean: number | null;
  mean_abs_lp_diff: number | null;
  max_abs_lp_diff: number | null;
  mean_imp_ratio: number | null;
  adv_mean: number | null;
  adv_std: number | null;
  return_mean: number | null;
  alignment_failed: boolean;
};

export interface SummaryFrame {
  columns: SummaryColumn[];
  rows: SummaryRow[];
}

const DIGITS = /^[0-9]+$/;

function numericReward(r: unknown): number | null {
  if (typeof r === "number") return r;
  if (typeof r === "boolean") return r ? 1 : 0;
  if (typeof r === "bigint") return Number(r);
  return null;
}

function toolResultCount(prompt: unknown): number | null {
  if (!Array.isArray(prompt)) return null;
  let n = 0;
  for (const m of prompt as unknown[]) {
    const role: unknown = m instanceof Map ? m.get("role") : typeof m === "object" && m !== null ? (m as { role?: unknown }).role : undefined;
    if (role === "tool") n++;
  }
  return n;
}

/** The 16 columns every sample has (3.1). */
export function baseColumns(s: SampleRecord, rolloutId: number): Pick<SummaryRow, (typeof BASE_COLUMNS)[number]> {
  const versions = s.weightVersions;
  const numeric = versions.filter((v) => DIGITS.test(v)).map((v) => Number.parseInt(v, 10));
  const vmin = numeric.length ? Math.min(...numeric) : null;
  return {
    sample_index: s.index,
    group_index: s.groupIndex,
    status: s.status,
    remove_sample: s.removeSample,
    response_length: s.responseLength,
    total_length: s.tokens.length,
    reward: numericReward(s.reward),
    weight_version: versions.length ? (versions[versions.length - 1] as string) : null,
    weight_version_min: vmin,
    mixed_version: versions.length ? new Set(versions).size > 1 : null,
    staleness: vmin === null ? null : rolloutId - vmin,
    turns: versions.length ? versions.length : null,
    tool_calls: toolResultCount(s.prompt),
    non_generation_time: s.nonGenerationTime,
    spec_accept_rate: s.specDraftTokenNum !== 0 ? s.specAcceptTokenNum / s.specDraftTokenNum : null,
    prefix_cache_hit_rate: s.totalPromptTokens !== 0 ? s.cachedTokens / s.totalPromptTokens : null,
  };
}

type TrainColumns = Omit<SummaryRow, (typeof BASE_COLUMNS)[number]>;

/**
 * The train-side statistics of one TrainRow, with `truncated` left undefined when the
 * column was not dumped. Computed as soon as a row is joined, so the per-token tensors
 * of a whole rollout never have to be held at once.
 */
export type TrainStats = Omit<TrainColumns, "truncated"> & { truncated: boolean | undefined };

export function trainStats(row: TrainRow): TrainStats {
  const mask = row.lossMask;
  const f = row.fields;
  const entropy = maskedF32(f.entropy, mask);
  const lpDiff = maskedF32(diffF32(f.log_probs, f.rollout_log_probs), mask);
  const adv = maskedF32(f.advantages, mask);
  const absDiff = mapF32(lpDiff, Math.abs);
  return {
    raw_reward: row.rawReward,
    normalized_reward: row.reward,
    truncated: row.truncated,
    dumped_rank: row.rank,
    mean_entropy: meanF32(entropy),
    max_entropy: maxF32(entropy),
    ref_entropy_mean: meanF32(maskedF32(f.ref_entropy, mask)),
    mean_abs_lp_diff: meanF32(absDiff),
    max_abs_lp_diff: maxF32(absDiff),
    mean_imp_ratio: meanF32(mapF32(lpDiff, Math.exp)),
    adv_mean: meanF32(adv),
    adv_std: stdF32(adv),
    return_mean: meanF32(maskedF32(f.returns, mask)),
    alignment_failed: row.alignmentFailed,
  };
}

/** Train-side columns (3.2); `stats` null (no TrainRow) ⇒ the fallbacks. */
export function trainColumns(s: SampleRecord, stats: TrainStats | TrainRow | null): TrainColumns {
  if (stats === null) {
    return {
      raw_reward: null,
      normalized_reward: null,
      truncated: s.status === "truncated",
      dumped_rank: null,
      mean_entropy: null,
      max_entropy: null,
      ref_entropy_mean: null,
      mean_abs_lp_diff: null,
      max_abs_lp_diff: null,
      mean_imp_ratio: null,
      adv_mean: null,
      adv_std: null,
      return_mean: null,
      alignment_failed: false,
    };
  }
  const st = "fields" in stats ? trainStats(stats) : stats;
  return { ...st, truncated: st.truncated ?? s.status === "truncated" };
}

export function summaryRow(s: SampleRecord, row: TrainStats | TrainRow | null, rolloutId: number): SummaryRow {
  return { ...baseColumns(s, rolloutId), ...trainColumns(s, row) };
}

/** Summary frame of a rollout; column order follows the first row (3.3). */
export function buildSummary(
  samples: readonly SampleRecord[],
  trainRows: ReadonlyMap<number, TrainStats | TrainRow>,
  rolloutId: number,
  evaluation: boolean,
): SummaryFrame {
  const rows = samples.map((s) => summaryRow(s, s.index === null ? null : (trainRows.get(s.index) ?? null), rolloutId));
  // An empty dump has no first row; keep the natural order of its kind (the reference
  // would crash on the column-less frame).
  const first = samples[0];
  const firstHasTrain = first === undefined ? !evaluation : first.index !== null && trainRows.has(first.index);
  return { columns: [...(firstHasTrain ? TRAIN_COLUMNS : NO_TRAIN_COLUMNS)], rows };
}
