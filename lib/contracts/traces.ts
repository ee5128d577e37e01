/**
 * Contracts of the trace timeline endpoints (docs/api.md 9.2): `GET /api/rollout/{id}/traces`
 * and `GET /api/rollout/{id}/sample/{idx}/trace`. Path params are the rollout routes'
 * (`RolloutParams`, `SampleParams`); responses are validated after JSON serialisation
 * (non-finite numbers are null there).
 */
import { z } from "zod";
import { QueryBool } from "@/lib/contracts/common";

export { RolloutParams, SampleParams } from "@/lib/contracts/rollout";

const EvalFlag = QueryBool.default(false).describe("read the eval dump (`eval_{rolloutId}`) instead of the train dump");
export const GetStepTracesQuery = z.object({ eval: EvalFlag });
export const GetSampleTraceQuery = z.object({ eval: EvalFlag });

const num = z.number().nullable();
const ts = z.number().nullable();
const attrs = z.record(z.string(), z.unknown());
export const SPAN_KINDS = ["group", "sample", "generate", "reward", "tool", "pd_prefill", "pd_decode", "other"] as const;
const kind = z.enum(SPAN_KINDS);

export const TraceSpanSchema = z
  .object({
    span_id: z.string(),
    parent_span_id: z.string().nullable(),
    name: z.string(),
    kind,
    depth: z.number().int(),
    lane: z.enum(["P", "D"]).nullable(),
    request_span_id: z.string().nullable(),
    start: ts,
    end: ts,
    attrs,
  })
  .strict();

export const TraceEventSchema = z.object({ name: z.string(), ts, parent_span_id: z.string().nullable(), attrs }).strict();

export const RequestSegmentSchema = z
  .object({
    phase: z.enum(["queue", "prefill", "decode"]),
    seconds: num,
    source: z.enum(["measured", "remainder"]),
    parts: z.array(z.object({ name: z.string(), seconds: num }).strict()),
  })
  .strict();

export const RequestCardSchema = z
  .object({
    span_id: z.string().nullable(),
    name: z.string(),
    engine: z.string().nullable(),
    start: ts,
    end: ts,
    prompt_tokens: num,
    completion_tokens: num,
    cached_tokens: num,
    finish_reason: z.string().nullable(),
    e2e_latency: num,
    queue_time: num,
    decode_throughput: num,
    pd: z.boolean(),
    segments: z.array(RequestSegmentSchema),
    attrs,
  })
  .strict();

export const GetSampleTraceResponse = z
  .object({
    rollout_id: z.number().int(),
    evaluation: z.boolean(),
    sample_index: z.number().int(),
    group_index: z.number().int().nullable(),
    trace_id: z.string().nullable(),
    attempt: z.number().int().nullable(),
    t0: ts,
    t1: ts,
    spans: z.array(TraceSpanSchema),
    events: z.array(TraceEventSchema),
    requests: z.array(RequestCardSchema),
  })
  .strict();

export const TraceRowSchema = z
  .object({
    sample_index: z.number().int().nullable(),
    group_index: z.number().int().nullable(),
    status: z.string().nullable(),
    start: ts,
    end: ts,
    requests: z.number().int(),
    e2e_latency: num,
    queue_time: num,
    cached_tokens: num,
    prompt_tokens: num,
    completion_tokens: num,
    spans: z.array(z.object({ name: z.string(), kind, start: z.number(), end: z.number() }).strict()),
  })
  .strict();

export const GetStepTracesResponse = z
  .object({
    rollout_id: z.number().int(),
    evaluation: z.boolean(),
    t0: ts,
    t1: ts,
    rows: z.array(TraceRowSchema),
  })
  .strict();

export type GetSampleTraceResponse = z.infer<typeof GetSampleTraceResponse>;
export type GetStepTracesResponse = z.infer<typeof GetStepTracesResponse>;
export type TraceSpan = z.infer<typeof TraceSpanSchema>;
export type TraceEvent = z.infer<typeof TraceEventSchema>;
export type RequestCard = z.infer<typeof RequestCardSchema>;
export type TraceRow = z.infer<typeof TraceRowSchema>;
