import { describe, expect, it } from "vitest";
import type { EngineSample, GpuSample } from "@/lib/store/writer/records";
import { CollectorMetrics, MAX_SERIES } from "./self-metrics";

const eng = (addr: string, metric: string, labels: Record<string, string>, value: number): EngineSample => ({ ts: 1755000000, addr, metric, labels, value });
const gpu = (node: string, g: number, util: number): GpuSample => ({ ts: 1755000000 + util, node, gpu: g, util, mem_mb: 1000, power_w: 100 });

const lines = (m: CollectorMetrics, prefix: string): string[] =>
  m
    .render(undefined)
    .split("\n")
    .filter((l) => l.startsWith(prefix));

describe("CollectorMetrics latest values", () => {
  it("keeps the latest value per series, least recently updated first, labels escaped", () => {
    const m = new CollectorMetrics();
    m.noteEngine([
      eng("http://a:1", "sglang_x", { engine_type: "prefill", dp_rank: "0" }, 1),
      eng("http://a:1", "sglang_x", { engine_type: "prefill", dp_rank: "1" }, 2),
      eng("http://b:1", 'we"ird\\', { note: "line\nbreak" }, NaN),
      eng("http://a:1", "sglang_x", { engine_type: "prefill" }, 3),
    ]);
    m.noteEngine([eng("http://a:1", "sglang_x", { engine_type: "prefill", dp_rank: "0" }, 4)]);
    expect(lines(m, "rlboard_engine_metric{")).toEqual([
      'rlboard_engine_metric{addr="http://a:1",metric="sglang_x",engine_type="prefill",dp_rank="1"} 2',
      'rlboard_engine_metric{addr="http://b:1",metric="we\\"ird\\\\",note="line\\nbreak"} NaN',
      'rlboard_engine_metric{addr="http://a:1",metric="sglang_x",engine_type="prefill"} 3',
      'rlboard_engine_metric{addr="http://a:1",metric="sglang_x",engine_type="prefill",dp_rank="0"} 4',
    ]);
    expect(m.seriesCount).toEqual({ engine: 4, gpu: 0 });
  });

  it("treats label order as part of the series, like the label text it renders", () => {
    const m = new CollectorMetrics();
    m.noteEngine([eng("a", "m", { x: "1", y: "2" }, 1), eng("a", "m", { y: "2", x: "1" }, 2)]);
    expect(lines(m, "rlboard_engine_metric{")).toEqual(['rlboard_engine_metric{addr="a",metric="m",x="1",y="2"} 1', 'rlboard_engine_metric{addr="a",metric="m",y="2",x="1"} 2']);
  });

  it("keeps one lane per node and gpu, with the latest sample", () => {
    const m = new CollectorMetrics();
    m.noteGpu([gpu("10.0.0.1", 0, 10), gpu("10.0.0.1", 1, 20), gpu("10.0.0.2", 0, 30), gpu("10.0.0.1", 0, 40)]);
    expect(lines(m, "rlboard_gpu_util_percent")).toEqual([
      'rlboard_gpu_util_percent{node="10.0.0.1",gpu="1"} 20',
      'rlboard_gpu_util_percent{node="10.0.0.2",gpu="0"} 30',
      'rlboard_gpu_util_percent{node="10.0.0.1",gpu="0"} 40',
    ]);
    expect(lines(m, "rlboard_gpu_sample_timestamp_seconds")[2]).toBe('rlboard_gpu_sample_timestamp_seconds{node="10.0.0.1",gpu="0"} 1755000040');
  });

  it("stays bounded: past MAX_SERIES the least recently updated series go first", () => {
    const m = new CollectorMetrics();
    m.noteEngine([eng("keep", "m", {}, 1)]);
    for (let i = 0; i < MAX_SERIES * 3; i += 1000) {
      m.noteEngine(Array.from({ length: 1000 }, (_, j) => eng("a", "m", { i: String(i + j) }, i + j)));
      m.noteEngine([eng("keep", "m", {}, i)]); // recently updated: never evicted
      expect(m.seriesCount.engine).toBeLessThanOrEqual(MAX_SERIES);
    }
    const out = lines(m, "rlboard_engine_metric{");
    expect(out.length).toBe(m.seriesCount.engine);
    expect(out.at(-1)).toBe(`rlboard_engine_metric{addr="keep",metric="m"} ${MAX_SERIES * 3 - 1000}`);
    expect(out).toContain(`rlboard_engine_metric{addr="a",metric="m",i="${MAX_SERIES * 3 - 1}"} ${MAX_SERIES * 3 - 1}`);
    expect(out).not.toContain('rlboard_engine_metric{addr="a",metric="m",i="0"} 0');
  });
});
