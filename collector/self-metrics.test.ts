import { describe, expect, it } from "vitest";
import { pyFloat } from "@/lib/store/format";
import type { EngineSample, GpuSample, MetricsRecord, PhaseEvent } from "@/lib/store/format";
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
      'rlboard_engine_metric{engine="http://a:1",metric="sglang_x",engine_type="prefill",dp_rank="1",run_name="miles-run"} 2',
      'rlboard_engine_metric{engine="http://b:1",metric="we\\"ird\\\\",note="line\\nbreak",run_name="miles-run"} NaN',
      'rlboard_engine_metric{engine="http://a:1",metric="sglang_x",engine_type="prefill",run_name="miles-run"} 3',
      'rlboard_engine_metric{engine="http://a:1",metric="sglang_x",engine_type="prefill",dp_rank="0",run_name="miles-run"} 4',
    ]);
    expect(m.seriesCount).toMatchObject({ engine: 4, gpu: 0 });
  });

  it("treats label order as part of the series, like the label text it renders", () => {
    const m = new CollectorMetrics();
    m.noteEngine([eng("a", "m", { x: "1", y: "2" }, 1), eng("a", "m", { y: "2", x: "1" }, 2)]);
    expect(lines(m, "rlboard_engine_metric{")).toEqual(['rlboard_engine_metric{engine="a",metric="m",x="1",y="2",run_name="miles-run"} 1', 'rlboard_engine_metric{engine="a",metric="m",y="2",x="1",run_name="miles-run"} 2']);
  });

  it("keeps one lane per node and gpu, with the latest sample", () => {
    const m = new CollectorMetrics();
    m.noteGpu([gpu("10.0.0.1", 0, 10), gpu("10.0.0.1", 1, 20), gpu("10.0.0.2", 0, 30), gpu("10.0.0.1", 0, 40)]);
    expect(lines(m, "rlboard_gpu_util_percent")).toEqual([
      'rlboard_gpu_util_percent{node="10.0.0.1",gpu="1",run_name="miles-run"} 20',
      'rlboard_gpu_util_percent{node="10.0.0.2",gpu="0",run_name="miles-run"} 30',
      'rlboard_gpu_util_percent{node="10.0.0.1",gpu="0",run_name="miles-run"} 40',
    ]);
    expect(lines(m, "rlboard_gpu_sample_timestamp_seconds")[2]).toBe('rlboard_gpu_sample_timestamp_seconds{node="10.0.0.1",gpu="0",run_name="miles-run"} 1755000040');
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
    expect(out.at(-1)).toBe(`rlboard_engine_metric{engine="keep",metric="m",run_name="miles-run"} ${MAX_SERIES * 3 - 1000}`);
    expect(out).toContain(`rlboard_engine_metric{engine="a",metric="m",i="${MAX_SERIES * 3 - 1}",run_name="miles-run"} ${MAX_SERIES * 3 - 1}`);
    expect(out).not.toContain('rlboard_engine_metric{engine="a",metric="m",i="0",run_name="miles-run"} 0');
  });
});

const phase = (name: string, t0: number, t1: number, node = "10.0.0.1"): PhaseEvent => ({ name, t0, t1, node, gpus: [0], rank: 0, role: "train" });
const metric = (metrics: MetricsRecord["metrics"]): MetricsRecord => ({ ts: 1755000100, step_key: "rollout/step", step: 3, metrics });

/** name{labels} → value, for the sample lines of `text`. */
function samples(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of text.split("\n")) {
    if (l === "" || l.startsWith("#")) continue;
    const cut = l.lastIndexOf(" ");
    out.set(l.slice(0, cut), l.slice(cut + 1));
  }
  return out;
}

describe("CollectorMetrics forwarding (miles names and per-quantity families)", () => {
  it("exposes miles' dashboard gauges with the run_name label", () => {
    const m = new CollectorMetrics();
    m.noteGpu([{ ts: 1755000000, node: "10.0.0.1", gpu: 3, util: 87, mem_mb: 61234, power_w: 612 }]);
    m.noteEngine([
      eng("http://10.0.0.1:15000", "sglang_num_running_reqs", { engine_type: "unified", dp_rank: "0" }, 58),
      eng("http://10.0.0.1:15000", "sglang_num_running_reqs", { engine_type: "unified", dp_rank: "1" }, 61),
      eng("http://10.0.0.1:15000", "sglang_num_queue_reqs", { engine_type: "unified", dp_rank: "1" }, 4),
    ]);
    m.notePhases([phase("actor_train", 1755000081.2, 1755000120.7)]);
    m.noteMetrics([metric({ "rollout/rewards_mean": 0.5, "perf/step-time@p50": pyFloat(95), ok: true, name: "x" })]);
    const text = m.render(undefined, "qwen-grpo");
    const s = samples(text);
    expect(s.get('miles_metric_dashboard_gpu_10_0_0_1_3_util{run_name="qwen-grpo"}')).toBe("87");
    expect(s.get('miles_metric_dashboard_gpu_10_0_0_1_3_mem_mb{run_name="qwen-grpo"}')).toBe("61234");
    expect(s.get('miles_metric_dashboard_engine_10_0_0_1_15000_running_reqs{run_name="qwen-grpo"}')).toBe("119");
    expect(Number(s.get('miles_metric_dashboard_phase_actor_train_seconds{run_name="qwen-grpo"}'))).toBeCloseTo(39.5, 9);
    expect(s.get('miles_metric_rollout_rewards_mean{run_name="qwen-grpo"}')).toBe("0.5");
    expect(s.get('miles_metric_perf_step_time_at_p50{run_name="qwen-grpo"}')).toBe("95");
    expect(s.get('miles_metric_ok{run_name="qwen-grpo"}')).toBe("1");
    expect([...s.keys()].some((k) => k.startsWith("miles_metric_name"))).toBe(false); // strings are skipped
    // HELP is the original key, like miles' gauges.
    expect(text).toContain("# HELP miles_metric_perf_step_time_at_p50 perf/step-time@p50\n# TYPE miles_metric_perf_step_time_at_p50 gauge\n");
    // The same data, one family per quantity.
    expect(s.get('rlboard_gpu_util_percent{node="10.0.0.1",gpu="3",run_name="qwen-grpo"}')).toBe("87");
    expect(s.get('rlboard_engine_running_reqs{engine="http://10.0.0.1:15000",run_name="qwen-grpo"}')).toBe("119");
    expect(Number(s.get('rlboard_phase_last_duration_seconds{phase="actor_train",run_name="qwen-grpo"}'))).toBeCloseTo(39.5, 9);
    expect(s.get('rlboard_run_metric{metric="rollout/rewards_mean",run_name="qwen-grpo"}')).toBe("0.5");
    expect(s.get('rlboard_run_info{run_name="qwen-grpo"}')).toBe("1");
  });

  it("sums running reqs over one tick; a newer tick restarts the sum and an older one is ignored", () => {
    const m = new CollectorMetrics();
    const at = (ts: number, dp: string, v: number): EngineSample => ({ ts, addr: "http://e:1", metric: "sglang_num_running_reqs", labels: { dp_rank: dp }, value: v });
    m.noteEngine([at(10, "0", 5), at(10, "1", 6)]);
    m.noteEngine([at(10, "2", 7)]); // same tick, another batch
    expect(samples(m.render(undefined)).get('rlboard_engine_running_reqs{engine="http://e:1",run_name="miles-run"}')).toBe("18");
    m.noteEngine([at(12, "0", 1), at(11, "1", 100), at(12, "1", 2)]);
    expect(samples(m.render(undefined)).get('miles_metric_dashboard_engine_e_1_running_reqs{run_name="miles-run"}')).toBe("3");
  });

  it("keeps the latest completed phase per name across lanes, skipping OPEN markers", () => {
    const m = new CollectorMetrics();
    m.notePhases([phase("rollout", 100, 130, "10.0.0.2"), phase("rollout", 90, 140, "10.0.0.1"), phase("rollout", 200, -1)]);
    m.notePhases([phase("rollout", 100, 120, "10.0.0.3")]); // ended earlier, arrived later
    const s = samples(m.render(undefined));
    expect(s.get('rlboard_phase_last_duration_seconds{phase="rollout",run_name="miles-run"}')).toBe("50");
    expect(s.get('miles_metric_dashboard_phase_rollout_seconds{run_name="miles-run"}')).toBe("50");
  });

  it("writes only valid names and escaped label values", () => {
    const m = new CollectorMetrics();
    m.noteMetrics([metric(new Map([["perf/tok.per s", 1], ["1st", 2]]))]);
    m.notePhases([phase('we"ird\nname', 0, 2)]);
    m.noteEngine([eng("http://a:1", "m", { "0bad key": "v", run_name: "spoof", __x: "y" }, 1)]);
    const text = m.render(undefined, 'run "a"\\b');
    for (const l of text.split("\n")) {
      if (l === "" || l.startsWith("#")) continue;
      expect(l).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*\} \S+$/);
    }
    const s = samples(text);
    expect(s.get('miles_metric_perf_tok_per_s{run_name="run \\"a\\"\\\\b"}')).toBe("1");
    expect(s.get('miles_metric_1st{run_name="run \\"a\\"\\\\b"}')).toBe("2");
    expect(s.get('rlboard_phase_last_duration_seconds{phase="we\\"ird\\nname",run_name="run \\"a\\"\\\\b"}')).toBe("2");
    expect(s.get('rlboard_engine_metric{engine="http://a:1",metric="m",label_0bad_key="v",label_run_name="spoof",label___x="y",run_name="run \\"a\\"\\\\b"}')).toBe("1");
  });

  it("keeps the training-metric map bounded, dropping the least recently set keys", () => {
    const m = new CollectorMetrics();
    for (let i = 0; i < MAX_SERIES + 10; i++) m.noteMetrics([metric({ [`k${i}`]: i, keep: i })]);
    expect(m.seriesCount.metrics).toBeLessThanOrEqual(MAX_SERIES);
    const s = samples(m.render(undefined));
    expect(s.get('miles_metric_keep{run_name="miles-run"}')).toBe(String(MAX_SERIES + 9));
    expect(s.has('miles_metric_k0{run_name="miles-run"}')).toBe(false);
    expect(s.get(`miles_metric_k${MAX_SERIES + 9}{run_name="miles-run"}`)).toBe(String(MAX_SERIES + 9));
  });
});
