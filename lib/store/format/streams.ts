/**
 * The telemetry streams under `{run}/dashboard/` (docs/formats.md §2.4, §3): their names,
 * which are hourly-partitioned (`{stream}/{YYYYMMDD_HH}.jsonl`) and which are flat
 * (`{stream}.jsonl`), and the small files beside them. The one list every reader and writer
 * uses.
 */

/** Streams in the order a flush processes them (docs/formats.md §2.4). */
export const STREAMS = [
  "metrics",
  "phases",
  "topology",
  "gpu_util",
  "engine_series",
  "trajectories",
  "gpu_processes",
  "data_buffer",
] as const;
export type StreamName = (typeof STREAMS)[number];

/** Streams written as `{stream}/{YYYYMMDD_HH}.jsonl`. */
export const PARTITIONED_STREAMS = ["phases", "gpu_util", "engine_series", "trajectories", "gpu_processes"] as const satisfies readonly StreamName[];
export type PartitionedStreamName = (typeof PARTITIONED_STREAMS)[number];
/** Streams written as one flat `{stream}.jsonl`. */
export const FLAT_STREAMS = ["metrics", "topology", "data_buffer"] as const satisfies readonly StreamName[];
export type FlatStreamName = (typeof FLAT_STREAMS)[number];

const PARTITIONED: ReadonlySet<string> = new Set(PARTITIONED_STREAMS);
export function isPartitioned(stream: string): stream is PartitionedStreamName {
  return PARTITIONED.has(stream);
}

/**
 * Host telemetry (docs/formats.md, host stream): written by the collector's /proc sampler
 * beside the streams above as `host/{YYYYMMDD_HH}.jsonl`, read by lib/health/host.ts. Not
 * a RunWriter stream (it has its own appender), hence not in STREAMS.
 */
export const HOST_STREAM = "host";

/** Forwarded log signals (docs/formats.md §4.13), `log_signals/{YYYYMMDD_HH}.jsonl`; own appender like `host`. */
export const LOG_SIGNALS_STREAM = "log_signals";

/** Per-request SGLang timing (docs/formats.md §4.14), `requests/{rollout_id}.jsonl`; own appender like `host`. */
export const REQUESTS_STREAM = "requests";

/** The run header (§4.1) and the lane index (§4.10), relative to the dashboard dir. */
export const META_FILE = "meta.json";
export const LANE_CATALOG_FILE = "lane_catalog.json";
/** The dashboard dir inside a run directory. */
export const DASHBOARD_DIR = "dashboard";
