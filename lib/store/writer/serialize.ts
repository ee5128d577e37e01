/**
 * One JSONL line per record, byte-identical to the Python collector
 * (docs/formats.md §2.1): compact separators, the dataclass key order of §4,
 * float-typed fields via `formatFloat`, ints via `formatInt`, ASCII escaping.
 *
 * These are hand-written template strings rather than a generic walk because
 * they run once per record on the hot path and because JS numbers cannot
 * say which fields are floats.
 */
import { dumpPy, formatFloat as f, formatInt as i, formatString as s } from "@/lib/store/format";
import type {
  DataBufferSample,
  EngineInfo,
  EngineSample,
  GpuProcessSample,
  GpuSample,
  MetricsRecord,
  PhaseEvent,
  StreamName,
  StreamRecords,
  TopologySnapshot,
  TrajectoryEvent,
} from "@/lib/store/format";

const ints = (xs: readonly number[]): string => `[${xs.map(i).join(",")}]`;

function engineInfo(e: EngineInfo): string {
  const gpus = e.gpus.map(([node, gpu]) => `[${s(node)},${i(gpu)}]`).join(",");
  const uuids = e.gpu_uuids.map((u) => (u === null ? "null" : s(u))).join(",");
  return `{"addr":${s(e.addr)},"worker_type":${s(e.worker_type)},"engine_rank":${i(e.engine_rank)},"gpus":[${gpus}],"gpu_uuids":[${uuids}]}`;
}

function labels(l: Readonly<Record<string, string>>): string {
  let out = "";
  for (const k in l) out += `${out ? "," : ""}${s(k)}:${s(l[k] as string)}`;
  return `{${out}}`;
}

/** Serializers keyed by stream; each returns the line without its `\n`. */
export const LINE_SERIALIZERS: { [S in StreamName]: (r: StreamRecords[S]) => string } = {
  metrics: (r: MetricsRecord) =>
    `{"ts":${f(r.ts)},"step_key":${r.step_key === null ? "null" : s(r.step_key)},"step":${r.step === null ? "null" : i(r.step)},"metrics":${dumpPy(r.metrics)}}`,
  phases: (r: PhaseEvent) =>
    `{"name":${s(r.name)},"t0":${f(r.t0)},"t1":${f(r.t1)},"node":${s(r.node)},"gpus":${ints(r.gpus)},"rank":${i(r.rank)},"role":${s(r.role)}}`,
  topology: (r: TopologySnapshot) => `{"ts":${f(r.ts)},"engines":[${r.engines.map(engineInfo).join(",")}]}`,
  gpu_util: (r: GpuSample) =>
    `{"ts":${f(r.ts)},"node":${s(r.node)},"gpu":${i(r.gpu)},"util":${i(r.util)},"mem_mb":${i(r.mem_mb)},"power_w":${i(r.power_w)}}`,
  engine_series: (r: EngineSample) =>
    `{"ts":${f(r.ts)},"addr":${s(r.addr)},"metric":${s(r.metric)},"labels":${labels(r.labels)},"value":${f(r.value)}}`,
  trajectories: (r: TrajectoryEvent) =>
    `{"ts":${f(r.ts)},"kind":${s(r.kind)},"sample_index":${i(r.sample_index)},"group_index":${i(r.group_index)},"turn":${i(r.turn)},"weight_version":${s(r.weight_version)},"detail":${s(r.detail)}}`,
  gpu_processes: (r: GpuProcessSample) =>
    `{"ts":${f(r.ts)},"node":${s(r.node)},"gpu":${i(r.gpu)},"pid":${i(r.pid)},"name":${s(r.name)},"mem_mb":${i(r.mem_mb)}}`,
  data_buffer: (r: DataBufferSample) => `{"ts":${f(r.ts)},"length":${i(r.length)}}`,
};

export function serializeRecord<S extends StreamName>(stream: S, r: StreamRecords[S]): string {
  return LINE_SERIALIZERS[stream](r);
}
