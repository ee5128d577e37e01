/**
 * Record types of the telemetry streams under `{run}/dashboard/` (docs/formats.md §4,
 * docs/api.md 1.8). Object streams keep plain records; the two high-rate streams (gpu_util,
 * engine_series) never materialise per-row objects — see columns.ts / blocks.ts.
 */

export const PARTITIONED_STREAMS = ["phases", "gpu_util", "engine_series", "trajectories", "gpu_processes"] as const;
export type PartitionedStreamName = (typeof PARTITIONED_STREAMS)[number];
export const FLAT_STREAMS = ["metrics", "topology", "data_buffer"] as const;
export type FlatStreamName = (typeof FLAT_STREAMS)[number];
export type StreamName = PartitionedStreamName | FlatStreamName;
export const ALL_STREAMS: readonly StreamName[] = [...FLAT_STREAMS, ...PARTITIONED_STREAMS];

export type Scalar = number | string | boolean | null;

export interface RunMeta {
  run_name: string | null;
  start_ts: number | null;
  args: Record<string, unknown>;
  schema_version: number;
}

export interface MetricsRecord {
  ts: number;
  step_key: string | null;
  step: number | null;
  metrics: Record<string, Scalar>;
}

/** `t1 === -1` marks an OPEN phase (docs/formats.md 4.3.1). */
export interface PhaseEvent {
  name: string;
  t0: number;
  t1: number;
  node: string;
  gpus: readonly number[];
  rank: number;
  role: string;
}
export const OPEN_T1 = -1.0;

export interface EngineInfo {
  addr: string;
  worker_type: string;
  engine_rank: number;
  gpus: [string, number][];
  gpu_uuids: (string | null)[];
}

export interface TopologySnapshot {
  ts: number;
  engines: EngineInfo[];
}

export const TRAJECTORY_KINDS = ["attempt_start", "gen_start", "gen_end", "tool_start", "tool_end", "attempt_end"] as const;
export type TrajectoryKind = (typeof TRAJECTORY_KINDS)[number];

export interface TrajectoryEvent {
  ts: number;
  kind: TrajectoryKind;
  sample_index: number;
  group_index: number;
  turn: number;
  weight_version: string;
  detail: string;
}

export interface GpuProcessSample {
  ts: number;
  node: string;
  gpu: number;
  pid: number;
  name: string;
  mem_mb: number;
}

export interface DataBufferSample {
  ts: number;
  length: number;
}

/** One lane of the lane index (docs/api.md 8.3). */
export interface LaneInfo {
  node: string;
  gpu: number;
  index: number;
  ranks: number[];
  engine_addrs: string[];
  roles: string[];
}
