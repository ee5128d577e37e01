/**
 * The offline report (docs/export.md): one versioned JSON object per run, written by
 * `npm run export` next to the self-contained HTML and inlined into it. Every part is an
 * API answer computed by the same lib function as its route (docs/api.md 9.2), so the
 * schema reuses the routes' response contracts.
 */
import { z } from "zod";
import { QueryInt, semanticIssue } from "@/lib/contracts/common";
import {
  GetRolloutGroupsResponse,
  GetRolloutSummaryResponse,
  GetSampleMessagesResponse,
  GetSampleTokensResponse,
} from "@/lib/contracts/rollout";
import {
  GetAdvisoryResponse,
  GetFleetResponse,
  GetGpuResponse,
  GetMetaResponse,
  GetMetricsResponse,
  GetPhasesResponse,
  GetTopologyResponse,
} from "@/lib/contracts/telemetry";

export const REPORT_SCHEMA = "rlboard.report/1";

export { DEFAULT_MAX_LANES, DEFAULT_SAMPLES_PER_STEP, EXPORT_LIMITS } from "@/lib/contracts/limits";
import { DEFAULT_MAX_LANES, DEFAULT_SAMPLES_PER_STEP, EXPORT_LIMITS } from "@/lib/contracts/limits";

const int = z.number().int();

export const ReportOptions = z
  .object({
    /** Inclusive train-step range, null = every step. */
    steps: z.tuple([int, int]).nullable(),
    samples_per_step: int,
    max_lanes: int,
  })
  .strict();
export type ReportOptions = z.infer<typeof ReportOptions>;

/** Why a sample was picked (docs/export.md "Samples"). */
export const SamplePick = z.enum(["best", "worst", "median", "most_drifting", "quantile"]);
export type SamplePick = z.infer<typeof SamplePick>;

export const ReportSample = z
  .object({
    sample_index: int,
    picks: z.array(SamplePick),
    /** `/api/rollout/{step}/sample/{i}/messages`, null when the run has no sidecar for it (see `error`). */
    messages: GetSampleMessagesResponse.nullable(),
    /** `/api/rollout/{step}/sample/{i}/tokens` (whole sample), null when unreadable. */
    tokens: GetSampleTokensResponse.nullable(),
    errors: z.array(z.string()),
  })
  .strict();
export type ReportSample = z.infer<typeof ReportSample>;

export const ReportIncomplete = z
  .object({
    /** What is incomplete: a file relative to the run directory, or a view. */
    what: z.string(),
    reason: z.string(),
  })
  .strict();
export type ReportIncomplete = z.infer<typeof ReportIncomplete>;

export const ReportUtilization = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("lanes"),
      topology: GetTopologyResponse,
      gpu: GetGpuResponse,
    })
    .strict(),
  z
    .object({
      kind: z.literal("fleet"),
      /** Lanes of the run (more than `max_lanes`). */
      lanes: int,
      fleet: GetFleetResponse,
    })
    .strict(),
]);
export type ReportUtilization = z.infer<typeof ReportUtilization>;

export const Report = z
  .object({
    schema: z.literal(REPORT_SCHEMA),
    rlboard_version: z.string(),
    generated_at: z.string(),
    /** The run header: id, name, and the launch args of meta.json (null when it has none). */
    run: z.object({ id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()).nullable() }).strict(),
    options: ReportOptions,
    /** `/api/meta` (open object: additive fields of newer servers travel along). */
    meta: GetMetaResponse.loose(),
    /** `/api/metrics` for every scalar key of `meta.metric_keys`, each on its own step axis. */
    metrics: GetMetricsResponse,
    /** Step axis each metric key was read on (`rollout/step`, `train/step`, `eval/step`). */
    metric_axes: z.record(z.string(), z.string()),
    /** `/api/timeline/phases` for the whole run and the lanes of `utilization` (null: no phases). */
    phases: GetPhasesResponse.nullable(),
    utilization: ReportUtilization.nullable(),
    advisory: GetAdvisoryResponse.nullable(),
    /** Per exported train step: `/api/rollout/{step}/summary` and `/groups`. */
    rollout: z.record(z.string(), z.object({ summary: GetRolloutSummaryResponse, groups: GetRolloutGroupsResponse }).strict()),
    samples: z.record(z.string(), z.array(ReportSample)),
    /** Views the run has no input for, and the one line that says why (the HTML shows it instead of the tab). */
    absent: z.record(z.string(), z.string()),
    /** What the export found torn or unreadable and left out (named in the report header). */
    incomplete: z.array(ReportIncomplete),
  })
  .strict();
export type Report = z.infer<typeof Report>;

const StepRange = z
  .string()
  .superRefine((s, ctx) => {
    const m = /^(\d{1,9})(?:-(\d{1,9}))?$/.exec(s);
    if (s === "") return; // an empty form field: every step
    if (!m) semanticIssue(ctx, "steps: expected N or A-B (train step ids, inclusive)");
    else if (m[2] !== undefined && Number(m[1]) > Number(m[2])) semanticIssue(ctx, "steps: A must not exceed B");
  })
  .transform((s): [number, number] | undefined => {
    if (s === "") return undefined;
    const [a, b] = s.split("-").map(Number) as [number, number | undefined];
    return [a, b ?? a] as [number, number];
  });

/** An integer option (422 when not an integer, like every int query) with its bounds (400 naming the bound). */
const Bounded = (name: string, lo: number, hi: number, dflt: number) =>
  QueryInt.superRefine((n, ctx) => {
    if (n < lo) semanticIssue(ctx, `${name}=${n}: must be ≥ ${lo}`);
    else if (n > hi) semanticIssue(ctx, `${name}=${n}: the maximum is ${hi}`);
  }).default(dflt);

/** Export options as query strings / CLI flags (zod-validated bounds, docs/export.md). */
export const ExportQuery = z
  .object({
    steps: StepRange.optional(),
    samples_per_step: Bounded("samples_per_step", 0, EXPORT_LIMITS.samples_per_step, DEFAULT_SAMPLES_PER_STEP),
    max_lanes: Bounded("max_lanes", 1, EXPORT_LIMITS.max_lanes, DEFAULT_MAX_LANES),
  })
  .strict();
export type ExportQuery = z.infer<typeof ExportQuery>;

export function reportOptions(q: ExportQuery): ReportOptions {
  return { steps: q.steps ?? null, samples_per_step: q.samples_per_step, max_lanes: q.max_lanes };
}

/** `GET /api/export?run=…` query: the export options and the file to answer with (docs/api.md "Offline export"). */
export const GetExportQuery = ExportQuery.extend({
  format: z.enum(["html", "json"]).default("html").describe("html = the self-contained report page; json = its data"),
});
export type GetExportQuery = z.infer<typeof GetExportQuery>;
