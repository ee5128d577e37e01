/**
 * Contracts of the telemetry endpoints (docs/api.md 9.2): query schemas (FastAPI parsing
 * semantics: floats, decimal ints, Python-style booleans; unknown params ignored) and
 * strict response schemas shared by handlers, clients and tests.
 *
 * Bounds whose reference message must be exact (`max_points=1 must be >= 2`,
 * `x_buckets=… out of range [2, 4000]`, `top_k=…`, the window rules) and the upper size
 * limits (lib/contracts/limits.ts) are enforced in lib/timeline/window.ts, in the
 * reference's order. A type failure here is a 422, a non-finite `t0`/`t1` or an over-long
 * string a 400 (lib/contracts/common.ts).
 */
import { z } from "zod";
import { QueryBool, QueryInt, QueryText, QueryTime, semanticIssue } from "@/lib/contracts/common";
import { LIMITS } from "@/lib/contracts/limits";

const T0 = QueryTime("t0").optional().describe("window start (unix s, finite); with t1, t1 − t0 ≤ 14400");
const T1 = QueryTime("t1").optional().describe("window end (unix s, finite)");
const Lanes = QueryText("lanes", LIMITS.lanes_chars)
  .optional()
  .describe(`lane selection grammar, e.g. g:0-31,rank:4,every:8 (≤ ${LIMITS.lanes_chars} characters)`);

export const GetMetaQuery = z.object({});
export const GetTopologyQuery = z.object({});
export const GetBubblesQuery = z.object({});

const Format = z.enum(["json", "bin"]).default("json").describe("bin = the same answer as a binary column frame (lib/contracts/binary.ts)");

export const GetPhasesQuery = z.object({ t0: T0, t1: T1, lanes: Lanes, format: Format });
export type GetPhasesQuery = z.infer<typeof GetPhasesQuery>;

export const GetGpuQuery = z.object({
  t0: T0,
  t1: T1,
  max_points: QueryInt.default(2000).describe(`min/max downsampling target per lane (2 … ${LIMITS.max_points})`),
  lanes: Lanes,
  format: Format,
});
export type GetGpuQuery = z.infer<typeof GetGpuQuery>;

export const GetGpuProcessesQuery = z.object({ t0: T0, t1: T1, lanes: Lanes });
export type GetGpuProcessesQuery = z.infer<typeof GetGpuProcessesQuery>;

export const GetEngineSeriesQuery = z.object({
  metric: z.string().describe("raw or derived engine metric name"),
  t0: T0,
  t1: T1,
  max_points: QueryInt.default(2000),
  per_dp_rank: QueryBool.default(false).describe("keep dp ranks apart instead of folding them"),
});
export type GetEngineSeriesQuery = z.infer<typeof GetEngineSeriesQuery>;

export const GetHeatmapQuery = z.object({
  metric: z.string().default("util").describe("util | mem_mb | power_w | phase | lifecycle"),
  t0: T0,
  t1: T1,
  x_buckets: QueryInt.default(1200),
  lanes: Lanes,
});
export type GetHeatmapQuery = z.infer<typeof GetHeatmapQuery>;

export const GetFleetQuery = z.object({ t0: T0, t1: T1, x_buckets: QueryInt.default(600) });
export type GetFleetQuery = z.infer<typeof GetFleetQuery>;

export const GetOutliersQuery = z.object({
  criterion: z.string().describe("lowest_util | slowest_phase:<name>"),
  t0: T0,
  t1: T1,
  top_k: QueryInt.default(16),
});
export type GetOutliersQuery = z.infer<typeof GetOutliersQuery>;

export const GetAdvisoryQuery = z.object({ t0: T0, t1: T1 });
export type GetAdvisoryQuery = z.infer<typeof GetAdvisoryQuery>;

export const GetMetricsQuery = z.object({
  keys: z
    .string()
    .superRefine((keys, ctx) => {
      const n = keys.split(",").filter(Boolean).length;
      if (n > LIMITS.metric_keys) semanticIssue(ctx, `keys lists ${n} metrics; the maximum is ${LIMITS.metric_keys}`);
    })
    .describe(`comma-separated metric keys (≤ ${LIMITS.metric_keys}); dump/<column> for dump aggregates`),
  x: z.string().default("rollout/step"),
  t0: T0,
  t1: T1,
  format: z.enum(["json", "bin"]).optional().describe("json (default) | bin = the same answer as a binary column frame (lib/contracts/metrics-frame.ts)"),
});
export type GetMetricsQuery = z.infer<typeof GetMetricsQuery>;

// ---------------------------------------------------------------------------------------
// responses

const Num = z.number().nullable(); // NaN/±Inf travel as null
const Scalar = z.union([z.number(), z.string(), z.boolean()]).nullable();
const LaneRef = z.object({ node: z.string(), gpu: z.number().int(), index: z.number().int() }).strict();

const StreamCounts = z
  .object({
    metrics: z.number().int(),
    topology: z.number().int(),
    data_buffer: z.number().int(),
    phases: z.number().int(),
    gpu_util: z.number().int(),
    engine_series: z.number().int(),
    trajectories: z.number().int(),
    gpu_processes: z.number().int(),
  })
  .strict();

export const GetMetaResponse = z
  .object({
    mode: z.enum(["static", "follow"]),
    run_name: z.string().nullable(),
    start_ts: Num,
    wandb_url: z.string().nullable(),
    data_buffer_length: Num,
    time_range: z.tuple([z.number(), z.number()]).nullable(),
    rollout_ids: z.object({ train: z.array(z.number().int()), eval: z.array(z.number().int()) }).strict(),
    metric_keys: z.array(z.string()),
    engine_metric_keys: z.array(z.string()),
    step_keys: z.array(z.string()),
    capabilities: z
      .object({
        has_metrics: z.boolean(),
        has_tokenizer: z.boolean(),
        has_timeline: z.boolean(),
        has_engine_series: z.boolean(),
        max_window_s: z.number(),
        use_utilization_overview: z.boolean(),
      })
      .strict(),
    corrupt_lines: StreamCounts.describe("complete JSONL lines skipped as corrupt, per stream (rlboard extension)"),
    skipped_dumps: z
      .array(z.object({ file: z.string(), reason: z.string() }).strict())
      .describe("dump files found unreadable so far, left out of the dump/* step aggregates (rlboard extension)"),
    derived_metric_keys: z
      .array(z.string())
      .describe("per-step metrics derived from the run's files (drift/*, slime perf/*), x = rollout id (rlboard extension)"),
  })
  .strict();
export type GetMetaResponse = z.infer<typeof GetMetaResponse>;

const EngineInfo = z
  .object({
    addr: z.string(),
    worker_type: z.string(),
    engine_rank: z.number().int(),
    gpus: z.array(z.tuple([z.string(), z.number().int()])),
    gpu_uuids: z.array(z.string().nullable()),
  })
  .strict();

export const GetTopologyResponse = z
  .object({
    lanes: z.array(LaneRef),
    windows: z.array(z.object({ t0: z.number(), t1: z.number().nullable(), engines: z.array(EngineInfo) }).strict()),
  })
  .strict();
export type GetTopologyResponse = z.infer<typeof GetTopologyResponse>;

export const PhaseInterval = z
  .object({
    name: z.string(),
    t0: z.number(),
    t1: z.number(),
    node: z.string(),
    gpu: z.number().int(),
    rank: z.number().int(),
    role: z.string(),
  })
  .strict();
export const GetPhasesResponse = z.object({ phases: z.array(PhaseInterval) }).strict();
export type GetPhasesResponse = z.infer<typeof GetPhasesResponse>;

export const GetGpuResponse = z
  .object({
    lanes: z.record(
      z.string(),
      z
        .object({ ts: z.array(z.number()), util: z.array(z.number()), mem_mb: z.array(z.number()), power_w: z.array(z.number()) })
        .strict(),
    ),
  })
  .strict();
export type GetGpuResponse = z.infer<typeof GetGpuResponse>;

export const GetGpuProcessesResponse = z
  .object({
    processes: z.array(
      z
        .object({ ts: z.number(), node: z.string(), gpu: z.number().int(), pid: z.number().int(), name: z.string(), mem_mb: z.number() })
        .strict(),
    ),
  })
  .strict();
export type GetGpuProcessesResponse = z.infer<typeof GetGpuProcessesResponse>;

export const GetEngineSeriesResponse = z
  .object({
    series: z.array(
      z
        .object({ addr: z.string(), labels: z.record(z.string(), z.string()), ts: z.array(z.number()), value: z.array(Num) })
        .strict(),
    ),
  })
  .strict();
export type GetEngineSeriesResponse = z.infer<typeof GetEngineSeriesResponse>;

/** JSON header of the heatmap frame (lib/contracts/binary.ts). */
export const HeatmapHeader = z
  .object({
    rows: z.array(
      z.union([
        z.object({ node: z.string(), gpu: z.number().int(), index: z.number().int(), roles: z.array(z.string()) }).strict(),
        z.object({ sample_index: z.number().int(), group_index: z.number().int() }).strict(),
      ]),
    ),
    rows_total: z.number().int().optional(),
    x_buckets: z.number().int(),
    t0: z.number(),
    t1: z.number(),
    metric: z.string(),
    scale: z.object({ max: Num }).strict().nullable(),
    palette: z.array(z.string()).nullable(),
  })
  .strict();
export type HeatmapHeader = z.infer<typeof HeatmapHeader>;

const NumList = z.array(Num);
export const GetFleetResponse = z
  .object({
    t0: z.number(),
    t1: z.number(),
    x_buckets: z.number().int(),
    lanes: z.number().int(),
    palette: z.array(z.string()),
    composition: z.record(z.string(), NumList),
    band: z.object({ p10: NumList, p50: NumList, p90: NumList, min: NumList }).strict(),
  })
  .strict();
export type GetFleetResponse = z.infer<typeof GetFleetResponse>;

export const GetOutliersResponse = z
  .object({ outliers: z.array(z.object({ node: z.string(), gpu: z.number().int(), score: Num }).strict()) })
  .strict();
export type GetOutliersResponse = z.infer<typeof GetOutliersResponse>;

export const GetBubblesResponse = z
  .object({
    bubbles: z.array(z.object({ step: z.number().nullable(), ts: z.number(), step_time: Scalar, wait_ratio: Scalar }).strict()),
  })
  .strict();
export type GetBubblesResponse = z.infer<typeof GetBubblesResponse>;

export const Advisory = z
  .object({ level: z.enum(["critical", "warning", "info"]), message: z.string() })
  .strict();
export type Advisory = z.infer<typeof Advisory>;

export const MfuSummary = z
  .object({ latest: Num, mean: Num, steps: z.number().int(), peak: Num })
  .strict();
export type MfuSummary = z.infer<typeof MfuSummary>;

export const GetAdvisoryResponse = z.object({ advisories: z.array(Advisory), mfu: MfuSummary.nullable() }).strict();
export type GetAdvisoryResponse = z.infer<typeof GetAdvisoryResponse>;

export const GetMetricsResponse = z.record(
  z.string(),
  z.object({ x: z.array(z.number().nullable()), y: z.array(Scalar), ts: z.array(z.number()) }).strict(),
);
export type GetMetricsResponse = z.infer<typeof GetMetricsResponse>;
