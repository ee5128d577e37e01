/**
 * Test-only builders of dump directories: rollout dumps, train shards (with TP copies,
 * CP slicing and the batch-global raw_reward), parquet mirrors and sidecars, written as
 * real `.pt`/parquet/JSONL files with the project's .pt writer (lib/store/pt/write).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pyFloat, tensorOf, writePt } from "@/lib/store/pt/write";
import { logitRanges, type CpGeometry } from "./cp";
import { PER_TOKEN_FIELDS, type PerTokenField } from "./types";

export async function makeRunDir(prefix = "rlboard-dumps-"): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Set every file's mtime to 2026-01-01 so the 10 s visibility rule never hides it. */
export async function ageFiles(dir: string, when = new Date("2026-01-01T00:00:00Z")): Promise<void> {
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) await fs.utimes(path.join(e.parentPath, e.name), when, when);
  }
}

export interface SampleSpec {
  index: number;
  group_index?: number | null;
  prompt?: unknown;
  prompt_len?: number;
  response_length: number;
  reward?: unknown;
  status?: string;
  weight_versions?: string[];
  rollout_log_probs?: number[] | null;
  loss_mask?: number[] | null;
  remove_sample?: boolean;
  non_generation_time?: number;
  spec_info?: Record<string, number>;
  prefix_cache_info?: Record<string, number>;
}

export function tokensOf(s: SampleSpec): number[] {
  const p = s.prompt_len ?? 3;
  return Array.from({ length: p + s.response_length }, (_, i) => (s.index * 7 + i * 3) % 100);
}

const floats = (xs: readonly number[]) => xs.map((x) => pyFloat(x));

export async function writeRollout(
  dir: string,
  rolloutId: number,
  samples: readonly SampleSpec[],
  opts: { evaluation?: boolean; storedRolloutId?: number } = {},
): Promise<string> {
  const stem = opts.evaluation ? `eval_${rolloutId}` : String(rolloutId);
  const file = path.join(dir, "rollout_data", `${stem}.pt`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writePt(file, {
    rollout_id: opts.storedRolloutId ?? rolloutId,
    metadata: {},
    samples: samples.map((s) => ({
      group_index: s.group_index === undefined ? Math.floor(s.index / 2) : s.group_index,
      index: s.index,
      rollout_id: null,
      prompt: s.prompt ?? "q",
      tokens: tokensOf(s),
      response: "x".repeat(s.response_length),
      response_length: s.response_length,
      label: null,
      reward: typeof s.reward === "number" ? pyFloat(s.reward) : s.reward === undefined ? pyFloat(1) : s.reward,
      loss_mask: s.loss_mask ?? null,
      weight_versions: s.weight_versions ?? [String(rolloutId)],
      rollout_log_probs: s.rollout_log_probs === undefined ? null : s.rollout_log_probs && floats(s.rollout_log_probs),
      rollout_routed_experts: null,
      remove_sample: s.remove_sample ?? false,
      status: s.status ?? "completed",
      metadata: {},
      non_generation_time: pyFloat(s.non_generation_time ?? 0),
      spec_info: s.spec_info ?? { spec_accept_token_num: 0, spec_draft_token_num: 0, spec_verify_ct: 0, completion_token_num: 0 },
      prefix_cache_info: s.prefix_cache_info ?? { cached_tokens: 0, total_prompt_tokens: 0 },
      extra_unknown_key: [1, 2, 3],
    })),
  });
  return file;
}

/** Full per-token train values of one sample, field → response-length array. */
export type TrainValues = Partial<Record<PerTokenField, number[] | null>>;

export interface TrainSampleSpec {
  sample: SampleSpec;
  values: TrainValues;
  loss_mask?: number[];
  reward?: number;
  truncated?: number;
}

export interface ShardSpec {
  rank: number;
  rows: readonly TrainSampleSpec[];
  /** Recorded CP coordinates; omit both for a legacy dump. */
  cp?: { rank: number; size: number } | "legacy";
  cpSize?: number;
  cpRank?: number;
  raw_reward?: number[] | null;
  /** Drop these columns entirely. */
  drop?: readonly string[];
  /** Override response/total lengths (consistency tests). */
  lengthsOverride?: { response: number; total: number };
  qkv_format?: string;
}

/** The CP slice of a full response-length field held by `cpRank` (inverse of reassembly). */
export function cpSlice(values: readonly number[], g: CpGeometry, cpRank: number): number[] {
  const P = g.totalLength - g.responseLength;
  const out: number[] = [];
  for (const [lo, hi] of logitRanges(g, cpRank)) {
    for (let i = lo; i < hi; i++) out.push(values[i - (P - 1)] as number);
  }
  return out;
}

export async function writeTrainShard(dir: string, rolloutId: number, spec: ShardSpec): Promise<string> {
  const file = path.join(dir, "train_data", `${rolloutId}_${spec.rank}.pt`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const cp = spec.cp === "legacy" || spec.cp === undefined ? null : spec.cp;
  const cpSize = spec.cp === "legacy" ? (spec.cpSize ?? 1) : (cp?.size ?? 1);
  const cpRank = spec.cp === "legacy" ? (spec.cpRank ?? 0) : (cp?.rank ?? 0);
  const data: Record<string, unknown> = {
    tokens: spec.rows.map((r) => tensorOf("i64", tokensOf(r.sample))),
    response_lengths: spec.rows.map((r) => spec.lengthsOverride?.response ?? r.sample.response_length),
    rewards: spec.rows.map((r) => pyFloat(r.reward ?? 0.5)),
    truncated: spec.rows.map((r) => r.truncated ?? 0),
    loss_masks: spec.rows.map((r) => tensorOf("i32", r.loss_mask ?? new Array<number>(r.sample.response_length).fill(1))),
    sample_indices: spec.rows.map((r) => r.sample.index),
    weight_versions: spec.rows.map((r) => r.sample.weight_versions ?? [String(rolloutId)]),
    total_lengths: spec.rows.map((r) => spec.lengthsOverride?.total ?? tokensOf(r.sample).length),
  };
  if (spec.raw_reward !== undefined) data.raw_reward = spec.raw_reward === null ? null : floats(spec.raw_reward);
  for (const field of PER_TOKEN_FIELDS) {
    if (!spec.rows.some((r) => r.values[field])) continue;
    data[field] = spec.rows.map((r) => {
      const full = r.values[field];
      if (!full) return null;
      const g: CpGeometry = {
        totalLength: tokensOf(r.sample).length,
        responseLength: r.sample.response_length,
        cpSize,
      };
      return tensorOf("f32", cpSize === 1 ? full : cpSlice(full, g, cpRank));
    });
  }
  for (const col of spec.drop ?? []) delete data[col];
  const root: Record<string, unknown> = { rollout_id: rolloutId, rank: spec.rank, rollout_data: data };
  if (cp) {
    root.cp_rank = cp.rank;
    root.cp_size = cp.size;
    root.qkv_format = spec.qkv_format ?? "thd";
  }
  await writePt(file, root);
  return file;
}

/** Deterministic pseudo-random float32-exact values. */
export function seq(n: number, seed: number, scale = 1, offset = 0): number[] {
  let x = seed * 9301 + 49297;
  return Array.from({ length: n }, () => {
    x = (x * 9301 + 49297) % 233280;
    return Math.fround(offset + (x / 233280) * scale);
  });
}

export function fullValues(s: SampleSpec, seed: number): Record<PerTokenField, number[]> {
  const R = s.response_length;
  return {
    log_probs: seq(R, seed, -1),
    rollout_log_probs: seq(R, seed + 1, -1),
    ref_log_probs: seq(R, seed + 2, -1),
    entropy: seq(R, seed + 3, 1),
    ref_entropy: seq(R, seed + 4, 1),
    advantages: seq(R, seed + 5, 2, -1),
    returns: seq(R, seed + 6, 2, -1),
  };
}
