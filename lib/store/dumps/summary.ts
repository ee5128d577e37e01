/**
 * L1 per-sample summary rows (docs/api.md 3) as pure functions over SampleRecords and
 * TrainRows. Train-side statistics only ever see loss-masked tokens, in float32.
 */
import { lpDiffStats, maskBits, maskedMoments, type LpDiffStats, type MaskedMoments } from "./stats";
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
    total_length: s.totalLength ?? s.tokens.length,
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
  const f = row.fields;
  const st = fusedStats(row) ?? perFieldStats(row);
  return {
    raw_reward: row.rawReward,
    normalized_reward: row.reward,
    truncated: row.truncated,
    dumped_rank: row.rank,
    mean_entropy: st.entropy.mean,
    max_entropy: st.entropy.max,
    ref_entropy_mean: st.refEntropyMean,
    mean_abs_lp_diff: st.lp.meanAbs,
    max_abs_lp_diff: st.lp.maxAbs,
    mean_imp_ratio: st.lp.meanExp,
    adv_mean: st.adv.mean,
    adv_std: f.advantages === null ? null : st.adv.std,
    return_mean: st.returnMean,
    alignment_failed: row.alignmentFailed,
  };
}

interface RowMoments {
  entropy: MaskedMoments;
  refEntropyMean: number | null;
  lp: LpDiffStats;
  adv: MaskedMoments;
  returnMean: number | null;
}

const NO_MOMENTS: MaskedMoments = { mean: null, max: null, std: null };
const NO_LP: LpDiffStats = { meanAbs: null, maxAbs: null, meanExp: null };

/** One masked pass per field (any field lengths), see stats.ts. */
function perFieldStats(row: TrainRow): RowMoments {
  const f = row.fields;
  const bits = maskBits(row.lossMask, Math.max(row.lossMask.length, row.responseLength));
  return {
    entropy: maskedMoments(f.entropy, bits),
    refEntropyMean: maskedMoments(f.ref_entropy, bits).mean,
    lp: lpDiffStats(f.log_probs, f.rollout_log_probs, bits),
    adv: maskedMoments(f.advantages, bits, true),
    returnMean: maskedMoments(f.returns, bits).mean,
  };
}

/**
 * All statistics of a row in ONE pass over the loss mask (plus one for the advantage
 * std) when every present field has the same length — the normal case. Same float32
 * rounding and summation order as the per-field path, hence bit-identical; null when
 * lengths differ (the caller falls back).
 */
function fusedStats(row: TrainRow): RowMoments | null {
  const { entropy: ent, ref_entropy: ref, advantages: adv, returns: ret, log_probs: la, rollout_log_probs: lb } = row.fields;
  const lpOk = la !== null && lb !== null && la.length === lb.length;
  let n = -1;
  for (const x of [ent, ref, adv, ret, lpOk ? la : null]) {
    if (x === null) continue;
    if (n >= 0 && x.length !== n) return null;
    n = x.length;
  }
  if (n < 0) return { entropy: NO_MOMENTS, refEntropyMean: null, lp: NO_LP, adv: NO_MOMENTS, returnMean: null };
  const mask = row.lossMask;
  const m = Math.min(n, mask.length);
  let k = 0;
  let sE = 0, mE = -Infinity, nanE = false;
  let sR = 0;
  let sA = 0, sX = 0, mA = -Infinity, nanA = false;
  let sV = 0;
  let sT = 0;
  for (let i = 0; i < m; i++) {
    if (!((mask[i] as number) > 0)) continue;
    k++;
    if (ent !== null) {
      const v = Math.fround(ent[i] as number);
      sE += v;
      if (v > mE) mE = v;
      else if (v !== v) nanE = true;
    }
    if (ref !== null) sR += Math.fround(ref[i] as number);
    if (lpOk) {
      const d = Math.fround((la[i] as number) - (lb[i] as number));
      const ad = Math.abs(d);
      sA += ad;
      sX += Math.fround(Math.exp(d));
      if (ad > mA) mA = ad;
      else if (ad !== ad) nanA = true;
    }
    if (adv !== null) sV += Math.fround(adv[i] as number);
    if (ret !== null) sT += Math.fround(ret[i] as number);
  }
  if (k === 0) return { entropy: NO_MOMENTS, refEntropyMean: null, lp: NO_LP, adv: NO_MOMENTS, returnMean: null };
  let advStd: number | null = null;
  if (adv !== null) {
    if (k < 2) advStd = NaN;
    else {
      const mean = sV / k;
      let ss = 0;
      for (let i = 0; i < m; i++) {
        if (!((mask[i] as number) > 0)) continue;
        const d = Math.fround(adv[i] as number) - mean;
        ss += d * d;
      }
      advStd = Math.fround(Math.sqrt(ss / (k - 1)));
    }
  }
  return {
    entropy: ent === null ? NO_MOMENTS : { mean: Math.fround(sE / k), max: nanE ? NaN : mE, std: null },
    refEntropyMean: ref === null ? null : Math.fround(sR / k),
    lp: lpOk ? { meanAbs: Math.fround(sA / k), maxAbs: nanA ? NaN : mA, meanExp: Math.fround(sX / k) } : NO_LP,
    adv: adv === null ? NO_MOMENTS : { mean: Math.fround(sV / k), max: null, std: advStd },
    returnMean: ret === null ? null : Math.fround(sT / k),
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
  return {
    raw_reward: st.raw_reward,
    normalized_reward: st.normalized_reward,
    truncated: st.truncated ?? s.status === "truncated",
    dumped_rank: st.dumped_rank,
    mean_entropy: st.mean_entropy,
    max_entropy: st.max_entropy,
    ref_entropy_mean: st.ref_entropy_mean,
    mean_abs_lp_diff: st.mean_abs_lp_diff,
    max_abs_lp_diff: st.max_abs_lp_diff,
    mean_imp_ratio: st.mean_imp_ratio,
    adv_mean: st.adv_mean,
    adv_std: st.adv_std,
    return_mean: st.return_mean,
    alignment_failed: st.alignment_failed,
  };
}

export function summaryRow(s: SampleRecord, row: TrainStats | TrainRow | null, rolloutId: number): SummaryRow {
  const b = baseColumns(s, rolloutId);
  const t = trainColumns(s, row);
  // One literal in TRAIN_COLUMNS key order (cheaper than spreading two objects).
  return {
    sample_index: b.sample_index,
    group_index: b.group_index,
    status: b.status,
    remove_sample: b.remove_sample,
    response_length: b.response_length,
    total_length: b.total_length,
    reward: b.reward,
    weight_version: b.weight_version,
    weight_version_min: b.weight_version_min,
    mixed_version: b.mixed_version,
    staleness: b.staleness,
    turns: b.turns,
    tool_calls: b.tool_calls,
    non_generation_time: b.non_generation_time,
    spec_accept_rate: b.spec_accept_rate,
    prefix_cache_hit_rate: b.prefix_cache_hit_rate,
    raw_reward: t.raw_reward,
    normalized_reward: t.normalized_reward,
    truncated: t.truncated,
    dumped_rank: t.dumped_rank,
    mean_entropy: t.mean_entropy,
    max_entropy: t.max_entropy,
    ref_entropy_mean: t.ref_entropy_mean,
    mean_abs_lp_diff: t.mean_abs_lp_diff,
    max_abs_lp_diff: t.max_abs_lp_diff,
    mean_imp_ratio: t.mean_imp_ratio,
    adv_mean: t.adv_mean,
    adv_std: t.adv_std,
    return_mean: t.return_mean,
    alignment_failed: t.alignment_failed,
  };
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
