/**
 * The inputs a run can have and what writes each (docs/api.md 9.5.3): the one table behind
 * "why is this empty". Zod-free: the browser imports it (lib/contracts/health.ts re-exports it
 * beside the run_status schemas).
 */
export const RUN_INPUT_KEYS = [
  "dashboard",
  "meta",
  "phases",
  "metrics",
  "gpu_util",
  "engine_series",
  "topology",
  "trajectories",
  "rollout_dumps",
  "logs",
  "host",
] as const;
export type RunInputKey = (typeof RUN_INPUT_KEYS)[number];

export interface RunInputInfo {
  /** Where it lives, relative to the run directory. */
  path: string;
  /** The views (and API answers) that stay empty without it. */
  needed_by: string[];
  /** What writes it — the sentence an empty view shows. */
  written_by: string;
}

/** The one table behind "why is this empty" (docs/api.md 9.5.3). */
export const RUN_INPUTS: Record<RunInputKey, RunInputInfo> = {
  dashboard: {
    path: "dashboard/",
    needed_by: ["Compute Utilization", "Metrics", "run state"],
    written_by: "no `dashboard/` — start the collector (`npm run collector -- --dump-details DIR`) or miles with `--use-miles-dashboard`",
  },
  meta: {
    path: "dashboard/meta.json",
    needed_by: ["run header", "start time", "advisory"],
    written_by: "no `dashboard/meta.json` — the collector writes it when it starts",
  },
  phases: {
    path: "dashboard/phases/",
    needed_by: ["Compute Utilization (phase lanes)", "time to ready", "stall watchdog"],
    written_by: "no phases — miles' timer sinks write them with `--use-miles-dashboard` (FSDP runs have no train phases)",
  },
  metrics: {
    path: "dashboard/metrics.jsonl",
    needed_by: ["Metrics", "run list steps"],
    written_by: "no `metrics.jsonl` — miles posts its logged metrics to the collector with `--use-miles-dashboard`",
  },
  gpu_util: {
    path: "dashboard/gpu_util/",
    needed_by: ["Compute Utilization (GPU lanes)", "heatmap", "fleet"],
    written_by: "no GPU samples — the collector's GPU sampler (nvidia-smi/amd-smi; `--gpu-only --push URL` on the other nodes)",
  },
  engine_series: {
    path: "dashboard/engine_series/",
    needed_by: ["engine panels", "engine alarms"],
    written_by: "no engine series — start the collector with `--router URL` or `--engines URL,…` so it scrapes SGLang /metrics",
  },
  topology: {
    path: "dashboard/topology.jsonl",
    needed_by: ["Compute Utilization (engine lanes)"],
    written_by: "no topology — miles registers its engines with the collector (`--use-miles-dashboard`)",
  },
  trajectories: {
    path: "dashboard/trajectories/",
    needed_by: ["trajectory lanes", "sample lifecycle"],
    written_by: "no trajectory events — miles' rollout posts them with `--use-miles-dashboard`",
  },
  rollout_dumps: {
    path: "rollout_data/",
    needed_by: ["Rollout step", "Sample", "rollout advisories"],
    written_by: "no `rollout_data/` — miles dumps rollouts with `--dump-details DIR`",
  },
  logs: {
    path: "logs/",
    needed_by: ["log signals", "crash cause"],
    written_by: "no logs — put the job's logs under `{run}/logs/` (*.log, *.out, *.err) or name them with `serve --run-logs RUN_ID=GLOB`",
  },
  host: {
    path: "dashboard/host/",
    needed_by: ["host panel", "host advisories"],
    written_by: "no host telemetry — start the collector with `--host-telemetry`",
  },
};
