/**
 * Contracts of the drift explorer and rollout search (docs/api.md 9.2
 * `GET /api/rollout/{id}/drift`, `GET /api/rollout/search`). Responses are validated
 * after JSON serialisation (non-finite numbers have become null).
 */
import { z } from "zod";
import { QueryBool, QueryFloat, QueryInt, QueryText, semanticIssue } from "@/lib/contracts/common";

export const DRIFT_BY_VALUES = ["position", "segment", "engine", "version"] as const;

export const GetRolloutDriftQuery = z
  .object({
    by: z.enum(DRIFT_BY_VALUES).default("position").describe("breakdown of the bins"),
    bins: QueryInt.default(16).describe("response-position bins (by=position), 1–200"),
    clip_lo: QueryFloat.default(0.8).describe("lower importance-ratio clip (TIS-style)"),
    clip_hi: QueryFloat.default(1.25).describe("upper importance-ratio clip"),
    after_tool: QueryInt.default(32).describe("tokens after a tool result that form the `after_tool` segment, 1–4096"),
    eval: QueryBool.default(false).describe("eval step: answers `available: false` (no train log-probs)"),
  })
  .superRefine((q, ctx) => {
    if (q.bins < 1 || q.bins > 200) semanticIssue(ctx, `bins=${q.bins} must be between 1 and 200`);
    if (q.after_tool < 1 || q.after_tool > 4096) semanticIssue(ctx, `after_tool=${q.after_tool} must be between 1 and 4096`);
    if (!Number.isFinite(q.clip_lo) || !Number.isFinite(q.clip_hi) || !(q.clip_lo > 0) || !(q.clip_lo < q.clip_hi)) {
      semanticIssue(ctx, `clip range [${q.clip_lo}, ${q.clip_hi}] must satisfy 0 < clip_lo < clip_hi`);
    }
  });

const num = z.number().nullable();
const int = z.number().int();

const Quantiles = z.object({
  tokens: int,
  p50: num,
  p90: num,
  p99: num,
  mean: num,
  max: num,
  clip_frac: num,
});

export const DriftBinSchema = z
  .object({
    key: z.string(),
    label: z.string(),
    lo: int.nullable(),
    hi: int.nullable(),
    tokens: int,
    mean_abs: num,
    p99_abs: num,
    max_abs: num,
    mean_ratio: num,
    p99_ratio: num,
    clip_out: int,
    top: z.array(
      z
        .object({ sample_index: int, mass: num, tokens: int, worst_pos: int, worst_token: int, worst_abs: num })
        .strict(),
    ),
  })
  .strict();

export const StalenessSchema = z
  .object({
    available: z.boolean(),
    reason: z.string().nullable(),
    samples: int,
    tokens: int,
    mean: num,
    token_weighted_mean: num,
    max: int.nullable(),
    by_sample: z.array(int),
    by_token: z.array(int),
    worst: z.array(z.object({ sample_index: int, staleness: int, response_length: int }).strict()),
    scatter: z.object({ response_length: z.array(int), staleness: z.array(int), sample_index: z.array(int) }).strict(),
    by_length: z.array(z.object({ lo: int, hi: int, samples: int, mean: num }).strict()),
  })
  .strict();

export const GetRolloutDriftResponse = z
  .object({
    rollout_id: int,
    evaluation: z.boolean(),
    params: z
      .object({ by: z.enum(DRIFT_BY_VALUES), bins: int, clip_lo: z.number(), clip_hi: z.number(), after_tool: int })
      .strict(),
    available: z.boolean(),
    note: z.string().nullable(),
    samples: int,
    samples_missing: int,
    tokens: int,
    overall: Quantiles.extend({ mean_ratio: num, clip_low: int, clip_high: int }).strict(),
    histogram: z.object({ lo: num, hi: num, counts: z.array(int) }).strict(),
    bins: z.array(DriftBinSchema),
    staleness: StalenessSchema,
  })
  .strict();

// ---- search

const STEPS_RE = /^\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?$/;

/** `a-b` or `a` → an inclusive range; null when absent (the newest step). */
export function parseSteps(s: string | undefined): { lo: number; hi: number } | null {
  if (s === undefined || s.trim() === "") return null;
  const m = STEPS_RE.exec(s);
  if (!m) return null;
  const a = Number(m[1]);
  const b = m[2] === undefined ? a : Number(m[2]);
  return { lo: Math.min(a, b), hi: Math.max(a, b) };
}

export const GetRolloutSearchQuery = z
  .object({
    q: QueryText("q", 200).describe("text (or regex with regex=1) to find, case-insensitive"),
    steps: z.string().optional().describe("step range `a-b` or one step `a`; default: the newest step"),
    regex: QueryBool.default(false),
    eval: QueryBool.default(false).describe("search the eval dumps"),
  })
  .superRefine((q, ctx) => {
    if (q.q.length === 0) semanticIssue(ctx, "q must not be empty");
    if (q.steps !== undefined && q.steps.trim() !== "" && parseSteps(q.steps) === null) {
      semanticIssue(ctx, `steps=${JSON.stringify(q.steps)} is not a step range like 3-7`);
    }
  });

export const GetRolloutSearchResponse = z
  .object({
    q: z.string(),
    regex: z.boolean(),
    steps: z.array(int),
    total: int,
    truncated: z.boolean(),
    returned: int,
    samples: z.array(
      z
        .object({
          rollout_id: int,
          sample_index: int,
          hits: z.array(
            z
              .object({
                field: z.enum(["prompt", "response", "tool_call", "reasoning"]),
                message: int.nullable(),
                offset: int,
                length: int,
                snippet: z.string(),
                pre: int,
              })
              .strict(),
          ),
        })
        .strict(),
    ),
  })
  .strict();

export type RolloutDriftResponse = z.infer<typeof GetRolloutDriftResponse>;
export type RolloutSearchResponse = z.infer<typeof GetRolloutSearchResponse>;
