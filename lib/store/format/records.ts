/**
 * Zod schemas for the on-disk telemetry records (docs/formats.md §4) and the types inferred
 * from them: what producers may push to the collector, what the writer writes, and the
 * field lists the read side's decoders and the fast pre-checks (fast-validate.ts) follow.
 *
 * Policy: a record must carry exactly the listed keys (the Python reader
 * rejects missing and unknown keys). Float fields accept a plain number or a
 * `PyFloat` tag (what `parsePyJson` yields for `95.0`) and come out as plain
 * numbers: the serializers know which fields are floats. Int fields accept an
 * integral float token too (`3.0` → `3`). Timestamps must be finite and inside
 * years 1970..9999 because they choose an hourly file name.
 */
import { z } from "zod";
import { PyFloat } from "./python-json";
import type { StreamName } from "./streams";

/** 10000-01-01T00:00:00Z: beyond it no `YYYYMMDD_HH` file name exists. */
export const MAX_TS = 253402300800;

const unwrap = (v: unknown): unknown => (v instanceof PyFloat ? v.value : v);

/** Any float, including NaN / ±Infinity (metric values, engine samples). */
export const PyFloatValue = z.preprocess(
  unwrap,
  z.custom<number>((v) => typeof v === "number", { message: "expected number" }),
);
/** A finite float. */
export const FiniteFloat = z.preprocess(unwrap, z.number());
/** Epoch seconds that map to a valid UTC hour file (years 1970..9999). */
export const Timestamp = z.preprocess(unwrap, z.number().min(0).lt(MAX_TS));
export const Int = z.preprocess(unwrap, z.number().int());
const NonNegInt = z.preprocess(unwrap, z.number().int().min(0));

/** Free-form metric value: int, float (`PyFloat` for integral floats), bool or str. */
export const MetricValue = z.union([
  z.boolean(),
  z.string(),
  z.custom<number>((v) => typeof v === "number", { message: "expected number" }),
  z.instanceof(PyFloat),
]);
export type MetricValue = z.infer<typeof MetricValue>;
/** Metric dicts keep producer key order; integer-like keys arrive as a `Map`. */
export const MetricsDict = z.union([z.record(z.string(), MetricValue), z.map(z.string(), MetricValue)]);

export const MetricsRecord = z.strictObject({
  ts: Timestamp,
  step_key: z.string().nullable(),
  step: Int.nullable(),
  metrics: MetricsDict,
});

/** Roles of a phase event. */
export const PHASE_ROLES = ["train", "rollout_manager"] as const;

/** `t1` of an OPEN phase marker (docs/formats.md §4.3.1). */
export const OPEN_T1 = -1.0;

export const PhaseEvent = z.strictObject({
  name: z.string(),
  t0: Timestamp,
  t1: z.preprocess(
    unwrap,
    z.number().refine((v) => v === OPEN_T1 || (v >= 0 && v < MAX_TS), "expected a timestamp or -1.0"),
  ),
  node: z.string(),
  gpus: z.array(Int),
  rank: Int,
  role: z.enum(PHASE_ROLES),
});

export const EngineInfo = z.strictObject({
  addr: z.string(),
  worker_type: z.string(),
  engine_rank: Int,
  gpus: z.array(z.tuple([z.string(), Int])),
  gpu_uuids: z.array(z.string().nullable()),
});

export const TopologySnapshot = z.strictObject({
  ts: Timestamp,
  engines: z.array(EngineInfo),
});

/**
 * The readers keep util in a byte, mem_mb in 32 bits and power_w in 16: a sample outside
 * these ranges would be read back as another number, so it is refused here and a line
 * holding one is corrupt on read (docs/formats.md §4.5).
 */
export const GPU_VALUE_RANGE = { util: [0, 255], mem_mb: [-(2 ** 31), 2 ** 31 - 1], power_w: [-(2 ** 15), 2 ** 15 - 1] } as const;
const ranged = ([lo, hi]: readonly [number, number]) => z.preprocess(unwrap, z.number().int().min(lo).max(hi));

export const GpuSample = z.strictObject({
  ts: Timestamp,
  node: z.string(),
  gpu: NonNegInt,
  util: ranged(GPU_VALUE_RANGE.util),
  mem_mb: ranged(GPU_VALUE_RANGE.mem_mb),
  power_w: ranged(GPU_VALUE_RANGE.power_w),
});

export const GpuProcessSample = z.strictObject({
  ts: Timestamp,
  node: z.string(),
  gpu: NonNegInt,
  pid: Int,
  name: z.string(),
  mem_mb: Int,
});

export const EngineSample = z.strictObject({
  ts: Timestamp,
  addr: z.string(),
  metric: z.string(),
  labels: z.record(z.string(), z.string()),
  value: PyFloatValue,
});

export const TRAJECTORY_KINDS = ["attempt_start", "gen_start", "gen_end", "tool_start", "tool_end", "attempt_end"] as const;
export type TrajectoryKind = (typeof TRAJECTORY_KINDS)[number];

export const TrajectoryEvent = z.strictObject({
  ts: Timestamp,
  kind: z.enum(TRAJECTORY_KINDS),
  sample_index: Int,
  group_index: Int,
  turn: Int,
  weight_version: z.string(),
  detail: z.string(),
});

export const DataBufferSample = z.strictObject({
  ts: Timestamp,
  length: Int,
});

/** meta.json (docs/formats.md §4.1); `args` keeps its key order (Map for integer-like keys). */
export const MetaJson = z.strictObject({
  run_name: z.string(),
  start_ts: FiniteFloat,
  args: z.union([z.record(z.string(), z.unknown()), z.map(z.string(), z.unknown())]),
  schema_version: Int.default(1),
});

export type MetricsRecord = z.output<typeof MetricsRecord>;
export type PhaseEvent = z.output<typeof PhaseEvent>;
export type EngineInfo = z.output<typeof EngineInfo>;
export type TopologySnapshot = z.output<typeof TopologySnapshot>;
export type GpuSample = z.output<typeof GpuSample>;
export type GpuProcessSample = z.output<typeof GpuProcessSample>;
export type EngineSample = z.output<typeof EngineSample>;
export type TrajectoryEvent = z.output<typeof TrajectoryEvent>;
export type DataBufferSample = z.output<typeof DataBufferSample>;

export interface StreamRecords {
  metrics: MetricsRecord;
  phases: PhaseEvent;
  topology: TopologySnapshot;
  gpu_util: GpuSample;
  engine_series: EngineSample;
  trajectories: TrajectoryEvent;
  gpu_processes: GpuProcessSample;
  data_buffer: DataBufferSample;
}
export type AnyRecord = StreamRecords[StreamName];

export const STREAM_SCHEMAS = {
  metrics: MetricsRecord,
  phases: PhaseEvent,
  topology: TopologySnapshot,
  gpu_util: GpuSample,
  engine_series: EngineSample,
  trajectories: TrajectoryEvent,
  gpu_processes: GpuProcessSample,
  data_buffer: DataBufferSample,
} as const satisfies { [S in StreamName]: z.ZodType<StreamRecords[S]> };

/** The exact key set of each stream's records, in the order the writer writes them. */
export const RECORD_FIELDS = Object.fromEntries(
  Object.entries(STREAM_SCHEMAS).map(([s, schema]) => [s, Object.freeze(Object.keys(schema.shape))]),
) as { readonly [S in StreamName]: readonly string[] };
/** Keys of one topology engine entry. */
export const ENGINE_INFO_FIELDS: readonly string[] = Object.freeze(Object.keys(EngineInfo.shape));
