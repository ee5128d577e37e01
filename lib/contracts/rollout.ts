/**
 * Contracts of the /api/rollout/* endpoints (docs/api.md 9.2): path params, query
 * schemas and `.strict()` response schemas. Responses are validated AFTER JSON
 * serialisation, where every non-finite number has become null — hence the nullable
 * numbers.
 */
import { z } from "zod";
import { QueryBool, QueryInt, semanticIssue } from "@/lib/contracts/common";
import { LIMITS } from "@/lib/contracts/limits";

// ---- path params (route folders `[rolloutId]` and `[sampleIndex]`); negatives accepted

export const RolloutParams = z.object({
  rolloutId: QueryInt.describe("rollout id (training step); negative values are accepted and simply not found"),
});
export const SampleParams = RolloutParams.extend({
  sampleIndex: QueryInt.describe("run-global Sample.index"),
});

const EvalFlag = QueryBool.default(false).describe("read the eval dump (`eval_{rolloutId}`) instead of the train dump");

// ---- queries

export const GetRolloutSummaryQuery = z.object({ eval: EvalFlag });
export const GetRolloutGroupsQuery = z.object({ eval: EvalFlag });
export const GetRolloutTrajectoriesQuery = z.object({
  sample_index: QueryInt.optional().describe("restrict the batch anatomy to one sample"),
});
export const GetSampleMessagesQuery = z.object({ eval: EvalFlag });
export const GetSampleTokensQuery = z
  .object({
    start: QueryInt.default(0).describe("first token position (clamped at 0)"),
    end: QueryInt.optional().describe(`end token position, exclusive (clamped at total length; end − start ≤ ${LIMITS.token_window})`),
    eval: EvalFlag,
  })
  .superRefine((q, ctx) => {
    if (q.end === undefined) return;
    const n = q.end - Math.max(q.start, 0);
    if (n > LIMITS.token_window) semanticIssue(ctx, `token window end-start=${n} exceeds the maximum ${LIMITS.token_window}`);
  });

// ---- responses

const num = z.number().nullable();
const int = z.number().int();

export const SummaryRowSchema = z
  .object({
    sample_index: int.nullable(),
    group_index: int.nullable(),
    status: z.string(),
    remove_sample: z.boolean(),
    response_length: int,
    total_length: int,
    reward: num,
    weight_version: z.string().nullable(),
    weight_version_min: int.nullable(),
    mixed_version: z.boolean().nullable(),
    staleness: int.nullable(),
    turns: int.nullable(),
    tool_calls: int.nullable(),
    non_generation_time: num,
    spec_accept_rate: num,
    prefix_cache_hit_rate: num,
    raw_reward: num,
    normalized_reward: num,
    truncated: z.boolean(),
    dumped_rank: int.nullable(),
    mean_entropy: num,
    max_entropy: num,
    ref_entropy_mean: num,
    mean_abs_lp_diff: num,
    max_abs_lp_diff: num,
    mean_imp_ratio: num,
    adv_mean: num,
    adv_std: num,
    return_mean: num,
    alignment_failed: z.boolean(),
  })
  .strict();

export const GetRolloutSummaryResponse = z
  .object({
    rollout_id: int,
    evaluation: z.boolean(),
    columns: z.array(z.string()),
    rows: z.array(SummaryRowSchema),
  })
  .strict();

export const GroupRowSchema = z
  .object({
    group_index: int.nullable(),
    n: int,
    reward_mean: num,
    reward_std: num,
    response_length_mean: num,
    truncated_frac: num,
    zero_std: z.boolean(),
  })
  .strict();

export const GetRolloutGroupsResponse = z
  .object({
    rollout_id: int,
    evaluation: z.boolean(),
    columns: z.array(z.string()),
    rows: z.array(GroupRowSchema),
  })
  .strict();

const stat = z.array(z.number().nullable()).nullable();

export const GetSampleTokensResponse = z
  .object({
    rollout_id: int,
    sample_index: int,
    evaluation: z.boolean(),
    total_len: int,
    prompt_len: int,
    start: int,
    end: int,
    response_offset: int,
    token_ids: z.array(int),
    token_text: z.array(z.string()).nullable(),
    rollout_log_probs: stat,
    loss_mask: z.array(int).nullable(),
    train_log_probs: stat,
    ref_log_probs: stat,
    lp_diff: stat,
    imp_ratio: stat,
    entropy: stat,
    ref_entropy: stat,
    advantages: stat,
    returns: stat,
  })
  .strict();

/**
 * The sidecar row is returned unchanged (docs/api.md 7), so only its known fields are
 * typed and anything else a producer wrote passes through.
 */
export const GetSampleMessagesResponse = z
  .object({
    sample_index: int.nullable(),
    group_index: int.nullable().optional(),
    status: z.string().optional(),
    reward: num.optional(),
    prompt: z.unknown(),
    messages: z.array(z.unknown()),
  })
  .passthrough();

export const TrajectorySegmentSchema = z
  .object({
    kind: z.string(),
    t0: num,
    t1: num,
    turn: int,
    weight_version: z.string(),
  })
  .strict();

export const TrajectoryLaneSchema = z
  .object({
    sample_index: int,
    group_index: int.nullable(),
    first_ts: z.number(),
    last_ts: z.number(),
    segments: z.array(TrajectorySegmentSchema),
    attempts: z.array(z.object({ t0: num, t1: num }).strict()),
    status: z.string(),
    versions: z.array(int),
  })
  .strict();

export const GetRolloutTrajectoriesResponse = z
  .object({
    lanes: z.array(TrajectoryLaneSchema),
    consume_ts: num,
    t0: num,
  })
  .strict();

export type SummaryRowDto = z.infer<typeof SummaryRowSchema>;
export type GroupRowDto = z.infer<typeof GroupRowSchema>;
export type GetRolloutSummaryResponse = z.infer<typeof GetRolloutSummaryResponse>;
export type GetRolloutGroupsResponse = z.infer<typeof GetRolloutGroupsResponse>;
export type GetSampleTokensResponse = z.infer<typeof GetSampleTokensResponse>;
export type GetSampleMessagesResponse = z.infer<typeof GetSampleMessagesResponse>;
export type GetRolloutTrajectoriesResponse = z.infer<typeof GetRolloutTrajectoriesResponse>;
export type TrajectoryLaneDto = z.infer<typeof TrajectoryLaneSchema>;
