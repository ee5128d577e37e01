/**
 * Record types of the telemetry streams under `{run}/dashboard/` (docs/formats.md §4,
 * docs/api.md 1.8). Object streams keep plain records; the two high-rate streams (gpu_util,
 * engine_series) never materialise per-row objects — see columns.ts / blocks.ts.
 *
 * These are the read side's views: as tolerant as the decoders in blocks.ts (a phase role
 * is any string, metric dicts plain objects), where the format's zod types
 * (lib/store/format/records.ts) are what a writer may write.
 */

import { FLAT_STREAMS, PARTITIONED_STREAMS, type StreamName, type TrajectoryKind } from "@/lib/store/format";

// Stream names, trajectory kinds and OPEN_T1 are the format's (lib/store/format).
export { FLAT_STREAMS, OPEN_T1, PARTITIONED_STREAMS, TRAJECTORY_KINDS } from "@/lib/store/format";
export type { FlatStreamName, PartitionedStreamName, StreamName, TrajectoryKind } from "@/lib/store/format";
export type { RunHeader as RunMeta } from "@/lib/store/format";
/** Flat streams first, then the partitioned ones (the order readers open them). */
export const ALL_STREAMS: readonly StreamName[] = [...FLAT_STREAMS, ...PARTITIONED_STREAMS];

export type Scalar = number | string | boolean | null;

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
