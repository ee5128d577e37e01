/**
 * Contract of `GET /api/run_status` (docs/api.md 9.5 "Run health") and the table of a
 * run's inputs — which view needs each, what writes it — that both the API's `inputs`
 * and the views' empty states read ("why is this empty", docs/api.md 9.5.3). Plain data,
 * safe on the client.
 */
import { z } from "zod";
import { QueryInt, QueryTime } from "@/lib/contracts/common";
import { RUN_INPUT_KEYS } from "@/lib/contracts/run-inputs";

export const LOG_SIGNAL_NAMES = [
  "crash",
  "oom",
  "nccl_error",
  "ray_actor_died",
  "engine_error",
  "kv_transfer_timeout",
  "nan_inf",
] as const;
/**
 * `ended`: quiet without an end marker, crash or kill line (docs/api.md 9.5.2 rule 5);
 * `killed`: a kill is on record (SIGKILL, exit 137). Added after `killed`: earlier
 * answers called every such quiet run `killed`.
 */
export const RUN_STATES = ["running", "finished", "stalled", "crashed", "killed", "ended"] as const;
export type RunState = (typeof RUN_STATES)[number];

export { RUN_INPUT_KEYS, RUN_INPUTS, type RunInputInfo, type RunInputKey } from "@/lib/contracts/run-inputs";

export const GetRunStatusQuery = z.object({});

export const SignalSample = z.object({ file: z.string(), line: z.number().int(), text: z.string() }).strict();
export const LogSignal = z
  .object({
    signal: z.enum(LOG_SIGNAL_NAMES),
    severity: z.enum(["critical", "warning"]),
    count: z.number().int().min(0),
    first_ts: z.number().nullable(),
    last_ts: z.number().nullable(),
    samples: z.array(SignalSample).max(3),
  })
  .strict();
export type LogSignal = z.infer<typeof LogSignal>;

export const Evidence = z
  .object({
    kind: z.enum(["signal", "advisory", "telemetry", "end_marker"]),
    text: z.string(),
    ts: z.number().nullable(),
    file: z.string().optional(),
    line: z.number().int().optional(),
  })
  .strict();
export type Evidence = z.infer<typeof Evidence>;

export const Lifecycle = z
  .object({
    start_ts: z.number().nullable(),
    ready_ts: z.number().nullable().describe("the first rollout phase closes"),
    time_to_ready_s: z.number().nullable(),
    first_step_ts: z.number().nullable().describe("the first actor_train phase closes (else the first metrics record)"),
    time_to_first_step_s: z.number().nullable(),
    readiness_gap_s: z.number().nullable().describe("first_step_ts − ready_ts"),
    last_progress_ts: z.number().nullable(),
    last_activity_ts: z.number().nullable(),
    state: z.enum(RUN_STATES),
    cause: z.string(),
    evidence: z.array(Evidence),
  })
  .strict();
export type Lifecycle = z.infer<typeof Lifecycle>;

export const InputStatus = z
  .object({ present: z.boolean(), path: z.string(), needed_by: z.array(z.string()), written_by: z.string() })
  .strict();
export type InputStatus = z.infer<typeof InputStatus>;

export const GetRunStatusResponse = z
  .object({
    lifecycle: Lifecycle,
    log_signals: z.array(LogSignal).length(LOG_SIGNAL_NAMES.length),
    inputs: z.record(z.enum(RUN_INPUT_KEYS), InputStatus),
    alerts: z
      .object({ configured: z.boolean().describe("serve --alert-webhook given"), muted: z.boolean() })
      .strict()
      .optional()
      .describe("webhook alerts of this run (docs/api.md 9.5.5)"),
  })
  .strict();
export type GetRunStatusResponse = z.infer<typeof GetRunStatusResponse>;

// ---------------------------------------------------------------------------------------
// GET /api/timeline/host (docs/api.md 9.5.6)

export const GetHostQuery = z.object({
  t0: QueryTime("t0").optional().describe("window start (unix s); without t0/t1: the newest hour of host data"),
  t1: QueryTime("t1").optional(),
  max_points: QueryInt.default(600).describe("points per series at most (evenly strided)"),
});
export type GetHostQuery = z.infer<typeof GetHostQuery>;

const HostPoint = z.object({ ts: z.number(), cpu_pct: z.number().nullable(), mem_used_pct: z.number().nullable() }).strict();
const ProcPoint = z
  .object({
    ts: z.number(),
    cpu_core_pct: z.number().nullable(),
    rss_kb: z.number(),
    nonvoluntary_per_s: z.number().nullable(),
    fds: z.number(),
    fd_limit: z.number().nullable(),
    fd_headroom: z.number().nullable(),
  })
  .strict();
export const HostNodeSchema = z
  .object({
    node: z.string(),
    ncpu: z.number(),
    mem_total_kb: z.number(),
    series: z.array(HostPoint),
    procs: z.array(
      z
        .object({
          pid: z.number(),
          name: z.string(),
          role: z.string().optional().describe("the role a producer registered the pid with (POST /v1/procs)"),
          exited: z.number().optional().describe("ts of the host record that reported the process gone"),
          points: z.array(ProcPoint),
        })
        .strict(),
    ),
  })
  .strict();
export const GetHostResponse = z
  .object({
    nodes: z.array(HostNodeSchema),
    advisories: z.array(z.object({ level: z.literal("warning"), message: z.string() }).strict()),
  })
  .strict();
export type GetHostResponse = z.infer<typeof GetHostResponse>;
