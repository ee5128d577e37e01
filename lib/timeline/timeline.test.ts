import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import { decodeFrame } from "@/lib/contracts/binary";
import { GetFleetResponse, HeatmapHeader } from "@/lib/contracts/telemetry";
import { openMetricStore, type EngineInfo, type TrajectoryEvent } from "@/lib/store/telemetry";
import { phase, RunBuilder, type GpuRow } from "@/lib/store/telemetry/testing";
import * as api from "@/lib/timeline/api";
import type { DumpSource } from "@/lib/timeline/dump-source";
import { fleet, heatmap } from "@/lib/timeline/heatmap";
import { resolveLanes } from "@/lib/timeline/lanes";
import { getMetrics } from "@/lib/timeline/metrics";
import { outliers } from "@/lib/timeline/outliers";
import { phasesByLane } from "@/lib/timeline/phases";
import { trajectoryLanes } from "@/lib/timeline/trajectories";
import { getRolloutTrajectories, storeTimeline } from "@/lib/rollout";
import type { DumpReader } from "@/lib/store/dumps";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function run(): RunBuilder {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  return b;
}
const open = (b: RunBuilder) => openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });
const gpu = (ts: number, node: string, g: number, util: number, extra: Partial<GpuRow> = {}): GpuRow => ({
  ts,
  node,
  gpu: g,
  util,
  mem_mb: 1000,
  power_w: 100,
  ...extra,
});
const engine = (addr: string, gpus: [string, number][]): EngineInfo => ({
  addr,
  worker_type: gpus.length ? "regular" : "external",
  engine_rank: 0,
  gpus,
  gpu_uuids: gpus.map(() => null),
});
async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    throw e;
  }
}

describe("phases by lane", () => {
  it("drops an OPEN marker that has a closed twin and extends an unmatched one to the newest data", async () => {
    const b = run()
      .phases(
        phase("train_wait", 10, -1, { gpus: [0] }),
        phase("train_wait", 10, 20, { gpus: [0] }),
        phase("actor_train", 20, -1, { gpus: [0] }),
      )
      .gpu(gpu(100, "n1", 0, 1));
    const out = await phasesByLane(open(b), null, null, null);
    expect(out.map((p) => [p.name, p.t0, p.t1])).toEqual([
      ["train_wait", 10, 20],
      ["actor_train", 20, 100],
    ]);
  });

  it("finds arbitrarily old OPEN markers and closings filed under a later end hour", async () => {
    const b = run()
      .phases(phase("train_wait", 100, -1, { gpus: [0] }))
      .phases(phase("rollout_long", 36000, 36000 + 3 * 3600, { gpus: [1] }))
      .gpu(gpu(36100, "n1", 0, 1));
    const store = open(b);
    const out = await phasesByLane(store, 36000, 36500, null);
    expect(out.map((p) => [p.name, p.gpu])).toEqual([
      ["train_wait", 0],
      ["rollout_long", 1],
    ]);
  });

  it("applies the strict overlap rule", async () => {
    const b = run().phases(phase("a", 0, 10), phase("b", 10, 20), phase("c", 20, 30));
    const out = await phasesByLane(open(b), 10, 20, null);
    expect(out.map((p) => p.name)).toEqual(["b"]);
  });

  it("paints rollout-manager events on engine GPUs per topology window, split at restarts", async () => {
    const b = run()
      .topology(
        { ts: 0, engines: [engine("http://n1:15000", [["n1", 0], ["n1", 1]])] },
        { ts: 50, engines: [engine("http://n1:15002", [["n1", 1]])] },
      )
      .phases(phase("rollout", 30, 80, { gpus: [], rank: -1, role: "rollout_manager", node: "head" }));
    const out = await phasesByLane(open(b), null, null, null);
    expect(out.map((p) => [p.gpu, p.t0, p.t1, p.role, p.rank])).toEqual([
      [0, 30, 50, "rollout_manager", -1],
      [1, 30, 50, "rollout_manager", -1],
      [1, 50, 80, "rollout_manager", -1],
    ]);
    const sel = resolveLanes("gpu:n1:0", await open(b).laneIndex());
    expect((await phasesByLane(open(b), null, null, sel)).map((p) => p.gpu)).toEqual([0]);
  });

  it("falls back to the lanes of an external engine's host", async () => {
    const b = run()
      .laneCatalog({ "10.1.0.6:0": {}, "10.1.0.6:1": {}, "10.0.0.1:0": {} })
      .topology({ ts: 0, engines: [engine("http://10.1.0.6:15000", [])] })
      .phases(phase("rollout", 10, 20, { gpus: [], rank: -1, role: "rollout_manager" }));
    const out = await phasesByLane(open(b), null, null, null);
    expect(out.map((p) => `${p.node}:${p.gpu}`)).toEqual(["10.1.0.6:0", "10.1.0.6:1"]);
  });

  it("synthesizes the initialize band only when the window covers start_ts", async () => {
    const b = run()
      .meta({ start_ts: 5 })
      .phases(phase("actor_train", 20, 30, { gpus: [0, 1] }), phase("train_wait", 5, 8, { gpus: [1] }));
    const store = open(b);
    const out = await phasesByLane(store, 0, 100, null);
    expect(out.map((p) => [p.name, p.gpu, p.t0, p.t1, p.role, p.rank])).toEqual([
      ["initialize", 0, 5, 20, "derived", -1],
      ["actor_train", 0, 20, 30, "train", 0],
      ["train_wait", 1, 5, 8, "train", 0],
      ["actor_train", 1, 20, 30, "train", 0],
    ]);
    expect((await phasesByLane(store, 6, 100, null)).some((p) => p.name === "initialize")).toBe(false);
  });

  it("rejects bad windows and bad lanes at the endpoint", async () => {
    const store = open(run().phases(phase("a", 0, 1)));
    expect(await status(api.getPhases(store, { t0: 0, t1: 20000 }))).toBe(400);
    expect(await status(api.getPhases(store, { t0: 5, t1: 5 }))).toBe(400);
    expect(await status(api.getPhases(store, { lanes: "bogus:1" }))).toBe(400);
    expect(await status(api.getPhases(store, { t0: 0, t1: 14400 }))).toBe(200);
  });
});

describe("gpu series", () => {
  it("sorts per lane, keys by node:gpu in (node, gpu) order and min/max downsamples util", async () => {
    const rows: GpuRow[] = [];
    for (let i = 0; i < 100; i++) rows.push(gpu(i, "n2", 0, i === 37 ? 100 : i === 61 ? 0 : 50, { mem_mb: i }));
    rows.push(gpu(5, "n1", 10, 1), gpu(4, "n1", 10, 2), gpu(5, "n1", 2, 3));
    const store = open(run().gpu(...rows));
    const out = await api.getGpu(store, { max_points: 10 });
    expect(Object.keys(out.lanes)).toEqual(["n1:2", "n1:10", "n2:0"]);
    expect(out.lanes["n1:10"]!.ts).toEqual([4, 5]);
    expect(out.lanes["n1:10"]!.util).toEqual([2, 1]);
    const n2 = out.lanes["n2:0"]!;
    expect(n2.ts.length).toBeLessThanOrEqual(10);
    expect(n2.util).toContain(100);
    expect(n2.util).toContain(0);
    expect(n2.mem_mb).toEqual(n2.ts); // arrays stay aligned
    expect(await status(api.getGpu(store, { max_points: 1 }))).toBe(400);
    const sel = await api.getGpu(store, { max_points: 2000, lanes: "node:n1", t0: 4.5, t1: 5 });
    expect(sel.lanes).toEqual({
      "n1:2": { ts: [5], util: [3], mem_mb: [1000], power_w: [100] },
      "n1:10": { ts: [5], util: [1], mem_mb: [1000], power_w: [100] },
    });
  });

  it("filters gpu process snapshots by window and lanes", async () => {
    const store = open(
      run().processes(
        { ts: 1, node: "n1", gpu: 0, pid: 7, name: "sglang", mem_mb: 10 },
        { ts: 2, node: "n1", gpu: 1, pid: 8, name: "train", mem_mb: 20 },
        { ts: 9, node: "n1", gpu: 0, pid: 7, name: "sglang", mem_mb: 30 },
      ),
    );
    const out = await api.getGpuProcesses(store, { t0: 0, t1: 5, lanes: "gpu:n1:0" });
    expect(out.processes).toEqual([{ ts: 1, node: "n1", gpu: 0, pid: 7, name: "sglang", mem_mb: 10 }]);
  });
});

describe("heatmap and fleet", () => {
  /** The fleet example of docs/api.md 9.2: two lanes, 40 s, 4 buckets. */
  function fleetRun() {
    return run()
      .phases(
        phase("rollout", 0, 19, { node: "n", gpus: [0] }),
        phase("rollout", 10, 19, { node: "n", gpus: [1] }),
        phase("actor_train", 20, 29, { node: "n", gpus: [0, 1] }),
      )
      .gpu(gpu(5, "n", 0, 20), gpu(5, "n", 1, 90), gpu(15, "n", 0, 90), gpu(15, "n", 1, 90), gpu(25, "n", 0, 95), gpu(25, "n", 1, 95));
  }

  it("reproduces the spec's fleet example", async () => {
    const body = await fleet(open(fleetRun()), 0, 40, 4);
    expect(GetFleetResponse.parse(body)).toEqual({
      t0: 0,
      t1: 40,
      x_buckets: 4,
      lanes: 2,
      palette: ["", "actor_train", "rollout"],
      composition: { none: [0.5, 0, 0, 1], actor_train: [0, 0, 1, 0], rollout: [0.5, 1, 0, 0] },
      band: { p10: [20, 90, 95, null], p50: [90, 90, 95, null], p90: [90, 90, 95, null], min: [20, 90, 95, null] },
    });
  });

  it("paints util as the bucket MAX scaled to 100, and idle phases lose shared buckets", async () => {
    const b = fleetRun().phases(phase("train_wait", 18, 21, { node: "n", gpus: [0] }));
    const store = open(b);
    const util = await heatmap(store, "util", 0, 40, 4, null);
    expect(util.scale).toEqual({ max: 100 });
    expect([...util.values]).toEqual([51, 229, 242, 0, 229, 229, 242, 0]);
    const mem = await heatmap(store, "mem_mb", 0, 40, 4, null);
    expect(mem.scale).toEqual({ max: 1000 });
    const ph = await heatmap(store, "phase", 0, 40, 4, resolveLanes("g:0", await store.laneIndex()));
    expect(ph.palette).toEqual(["", "actor_train", "rollout", "train_wait"]);
    expect(ph.rows.length).toBe(1);
    // train_wait [18, 21] covers buckets 1..2, but rollout (1) and actor_train (2) win them
    expect([...ph.values]).toEqual([2, 2, 1, 0]);
  });

  it("frames the heatmap with a header the contract accepts", async () => {
    const frame = decodeFrame(await api.getHeatmapFrame(open(fleetRun()), { metric: "util", t0: 0, t1: 40, x_buckets: 4 }));
    const header = HeatmapHeader.parse(frame.header);
    expect(Object.keys(frame.header as object)).toEqual(["rows", "x_buckets", "t0", "t1", "metric", "scale", "palette"]);
    expect(frame.payload.length).toBe(header.rows.length * 4);
  });

  it("rejects unknown metrics and bad x_buckets, answers an empty store without validation", async () => {
    const store = open(fleetRun());
    expect(await status(api.getHeatmapFrame(store, { metric: "nope", x_buckets: 4 }))).toBe(400);
    expect(await status(api.getHeatmapFrame(store, { metric: "util", x_buckets: 1 }))).toBe(400);
    expect(await status(api.getFleet(store, { x_buckets: 4001 }))).toBe(400);
    const empty = await heatmap(open(run()), "nope", null, null, 5, null);
    expect(empty).toMatchObject({ rows: [], t0: 0, t1: 0, scale: null, palette: null });
  });

  it("lays out lifecycle rows per sample with rows_total", async () => {
    const ev = (ts: number, kind: TrajectoryEvent["kind"], sample: number, turn = -1): TrajectoryEvent => ({
      ts,
      kind,
      sample_index: sample,
      group_index: 0,
      turn,
      weight_version: "1",
      detail: "",
    });
    const store = open(
      run().trajectories(
        ev(0, "attempt_start", 1),
        ev(10, "gen_start", 1, 1),
        ev(20, "gen_end", 1, 1),
        ev(20, "tool_start", 1, 1),
        ev(30, "tool_end", 1, 1),
        ev(39, "attempt_end", 1),
        ev(5, "attempt_start", 2),
      ),
    );
    const h = await heatmap(store, "lifecycle", 0, 40, 4, null);
    expect(h.rows).toEqual([
      { sample_index: 1, group_index: 0 },
      { sample_index: 2, group_index: 0 },
    ]);
    expect(h.rows_total).toBe(2);
    expect([...h.values]).toEqual([1, 2, 3, 3, 1, 1, 1, 1]);
  });
});

describe("outliers and bubbles", () => {
  it("ranks lanes by mean util and by mean phase duration", async () => {
    const store = open(
      run()
        .gpu(gpu(1, "n", 0, 50), gpu(1, "n", 1, 10), gpu(2, "n", 1, 30), gpu(1, "m", 0, 20))
        .phases(phase("actor_train", 0, 10, { node: "n", gpus: [0, 1] }), phase("actor_train", 10, 40, { node: "n", gpus: [1] })),
    );
    expect(await outliers(store, "lowest_util", null, null, 2)).toEqual([
      { node: "m", gpu: 0, score: 20 },
      { node: "n", gpu: 1, score: 20 },
    ]);
    expect(await outliers(store, "slowest_phase:actor_train", null, null, 16)).toEqual([
      { node: "n", gpu: 1, score: 20 },
      { node: "n", gpu: 0, score: 10 },
    ]);
    expect(await status(outliers(store, "fastest", null, null, 16))).toBe(400);
    expect(await status(api.getOutliers(store, { criterion: "lowest_util", top_k: 0 }))).toBe(400);
  });

  it("lists rollout-step bubbles with step time and wait ratio", async () => {
    const store = open(
      run().metrics(
        { ts: 1, step_key: "rollout/step", step: 0, metrics: { "perf/step_time": 95.0 } },
        { ts: 2, step_key: "train/step", step: 0, metrics: { "perf/step_time": 1 } },
        { ts: 3, step_key: "rollout/step", step: 1, metrics: { "rollout/x": 1 } },
        { ts: 4, step_key: "rollout/step", step: 2, metrics: { "perf/step_time": 90, "perf/wait_time_ratio": 0.2 } },
      ),
    );
    expect((await api.getBubbles(store)).bubbles).toEqual([
      { step: 0, ts: 1, step_time: 95, wait_ratio: null },
      { step: 2, ts: 4, step_time: 90, wait_ratio: 0.2 },
    ]);
  });
});

describe("trajectory lanes", () => {
  it("assembles the docs/formats.md example sample", async () => {
    const e = (ts: number, kind: TrajectoryEvent["kind"], turn: number, wv: string, detail = ""): TrajectoryEvent => ({
      ts,
      kind,
      sample_index: 96,
      group_index: 12,
      turn,
      weight_version: wv,
      detail,
    });
    const store = open(
      run().trajectories(
        e(1755000200.0, "attempt_start", -1, ""),
        e(1755000203.4, "gen_start", -1, ""),
        e(1755000203.5, "gen_start", 1, ""),
        e(1755000208.9, "gen_end", 1, "", "412"),
        e(1755000208.9, "tool_start", 1, "3", "1 calls"),
        e(1755000211.2, "tool_end", 1, "3", "1 calls"),
        e(1755000211.2, "gen_start", 2, "3"),
        e(1755000216.0, "gen_end", 2, "3", "230"),
        e(1755000216.1, "attempt_end", -1, "4", "completed"),
      ),
    );
    const [lane, ...rest] = await trajectoryLanes(store, null, null);
    expect(rest).toEqual([]);
    expect(lane).toEqual({
      sample_index: 96,
      group_index: 12,
      first_ts: 1755000200.0,
      last_ts: 1755000216.1,
      segments: [
        { kind: "gen", t0: 1755000203.5, t1: 1755000208.9, turn: 1, weight_version: "" },
        { kind: "tool", t0: 1755000208.9, t1: 1755000211.2, turn: 1, weight_version: "3" },
        { kind: "gen", t0: 1755000211.2, t1: 1755000216.0, turn: 2, weight_version: "3" },
      ],
      attempts: [{ t0: 1755000200.0, t1: 1755000216.1 }],
      status: "completed",
      versions: [3, 4],
    });
    expect(await trajectoryLanes(store, null, null, [1])).toEqual([]);
  });

  it("closes open spans at attempt_end, lending its version, and keeps unfinished attempts", async () => {
    const e = (ts: number, kind: TrajectoryEvent["kind"], sample: number, wv = ""): TrajectoryEvent => ({
      ts,
      kind,
      sample_index: sample,
      group_index: 0,
      turn: -1,
      weight_version: wv,
      detail: "",
    });
    const store = open(run().trajectories(e(2, "attempt_start", 5), e(3, "gen_start", 5), e(9, "attempt_end", 5, "7"), e(1, "attempt_start", 6)));
    const lanes = await trajectoryLanes(store, null, null);
    expect(lanes.map((l) => l.sample_index)).toEqual([6, 5]);
    expect(lanes[0]!.attempts).toEqual([{ t0: 1, t1: null }]);
    expect(lanes[1]!.segments).toEqual([{ kind: "gen", t0: 3, t1: 9, turn: -1, weight_version: "7" }]);
  });

  it("hands out the same frozen lanes while the stream's files are unchanged, new ones once they grow", async () => {
    const e = (ts: number, kind: TrajectoryEvent["kind"], sample: number): TrajectoryEvent => ({
      ts,
      kind,
      sample_index: sample,
      group_index: 0,
      turn: -1,
      weight_version: "",
      detail: "",
    });
    const b = run().trajectories(e(2, "attempt_start", 5), e(9, "attempt_end", 5), e(3, "attempt_start", 6));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    const a = await trajectoryLanes(store, 0, 100, [5, 6]);
    expect(Object.isFrozen(a)).toBe(true);
    expect(await trajectoryLanes(store, 0, 100, [5, 6])).toBe(a);
    // another window, another sample set, or all samples: computed for what was asked
    expect((await trajectoryLanes(store, 0, 100, [6])).map((l) => l.sample_index)).toEqual([6]);
    expect((await trajectoryLanes(store, 5, 100, [5, 6])).map((l) => l.first_ts)).toEqual([9]);
    expect((await trajectoryLanes(store, null, null)).map((l) => l.sample_index)).toEqual([5, 6]);
    // the rollout endpoint's answer is one frozen object too (its JSON text is kept: lib/api/json.ts)
    const answer = await getRolloutTrajectories(null as unknown as DumpReader, storeTimeline(store), 0, 6);
    expect(Object.isFrozen(answer)).toBe(true);
    expect(await getRolloutTrajectories(null as unknown as DumpReader, storeTimeline(store), 0, 6)).toBe(answer);

    b.trajectories(e(12, "attempt_end", 6));
    const c = await trajectoryLanes(store, 0, 100, [5, 6]);
    expect(c).not.toBe(a);
    expect(c.find((l) => l.sample_index === 6)!.attempts).toEqual([{ t0: 3, t1: 12 }]);
    expect(a.find((l) => l.sample_index === 6)!.attempts).toEqual([{ t0: 3, t1: null }]);
  });
});

describe("/api/metrics", () => {
  const dumps: DumpSource = {
    listRolloutIds: async () => ({ train: [0, 1], eval: [] }),
    hasTokenizer: async () => false,
    stepAggregates: async () => [
      { rollout_id: 0, n_samples: 4, reward_mean: 0.5, reward_std: null, response_length_mean: 1, truncated_frac: 0, zero_std_group_frac: NaN, mean_abs_lp_diff: null, mean_entropy: null, mixed_version_frac: null },
      { rollout_id: 1, n_samples: 4, reward_mean: 0.25, reward_std: null, response_length_mean: 1, truncated_frac: 0, zero_std_group_frac: 0, mean_abs_lp_diff: null, mean_entropy: null, mixed_version_frac: null },
    ],
    summary: async () => ({ rollout_id: 0, evaluation: false, columns: [], rows: [] }),
    groups: async () => ({ rollout_id: 0, evaluation: false, columns: [], rows: [] }),
  };

  it("serves store keys in request order, then dump keys", async () => {
    const store = open(
      run().metrics(
        { ts: 10, step_key: "rollout/step", step: 0, metrics: { a: 1, b: "x" } },
        { ts: 11, step_key: "train/step", step: 5, metrics: { a: 2 } },
        { ts: 12, step_key: "rollout/step", step: 1, metrics: { a: NaN } },
      ),
    );
    const out = await getMetrics(store, dumps, { keys: "dump/zero_std_group_frac,a,,b,zz,dump/reward_std", x: "rollout/step", t0: null, t1: 11 });
    expect(Object.keys(out)).toEqual(["a", "b", "zz", "dump/zero_std_group_frac", "dump/reward_std"]);
    expect(out.a).toEqual({ x: [0], y: [1], ts: [10] });
    expect(out.b).toEqual({ x: [0], y: ["x"], ts: [10] });
    expect(out.zz).toEqual({ x: [], y: [], ts: [] });
    expect(out["dump/zero_std_group_frac"]!.x).toEqual([0, 1]);
    expect(out["dump/zero_std_group_frac"]!.y[0]).toBeNaN();
    expect(out["dump/reward_std"]).toEqual({ x: [], y: [], ts: [] });
  });

  it("rejects empty key lists and unknown dump metrics", async () => {
    const store = open(run());
    expect(await status(getMetrics(store, dumps, { keys: ",,", x: "rollout/step", t0: null, t1: null }))).toBe(400);
    const err = await getMetrics(store, dumps, { keys: "dump/nope", x: "rollout/step", t0: null, t1: null }).catch((e: unknown) => e);
    expect((err as ApiError).message).toBe("unknown dump metric 'dump/nope'");
  });
});

describe("/api/meta", () => {
  it("reports capabilities, offline dump keys and corrupt lines", async () => {
    const b = run().meta({ run_name: "r", start_ts: 1, args: { wandb_team: "t", wandb_project: "p", wandb_run_id: "id", wandb_host: "https://w.example/" } });
    b.raw("gpu_util/19700101_00.jsonl", "oops\n");
    const dumps: DumpSource = {
      listRolloutIds: async () => ({ train: [0], eval: [] }),
      hasTokenizer: async () => true,
      stepAggregates: async () => [],
      summary: async () => ({ rollout_id: 0, evaluation: false, columns: [], rows: [] }),
      groups: async () => ({ rollout_id: 0, evaluation: false, columns: [], rows: [] }),
    };
    const store = open(b);
    await store.gpuUtil.window(null, null);
    const meta = await api.getMeta({ store, dumps, settings: { follow: true, lowMfuThreshold: 0.15, useUtilizationOverview: true } });
    expect(meta).toMatchObject({
      mode: "follow",
      run_name: "r",
      wandb_url: "https://w.example/t/p/runs/id",
      time_range: null,
      metric_keys: ["dump/reward_mean", "dump/reward_std", "dump/response_length_mean", "dump/truncated_frac", "dump/zero_std_group_frac", "dump/mean_abs_lp_diff", "dump/mean_entropy", "dump/mixed_version_frac"],
      capabilities: { has_metrics: false, has_tokenizer: true, has_timeline: true, has_engine_series: false, use_utilization_overview: true },
    });
    expect(meta.corrupt_lines.gpu_util).toBe(1);
  });
});

describe("columns across chunk boundaries", () => {
  it("reads tick groups that straddle a 65536-row chunk edge", async () => {
    const rows: GpuRow[] = [];
    for (let t = 0; t < 30000; t++) for (let g = 0; g < 3; g++) rows.push(gpu(t, "n", g, (t + g) % 101));
    const store = open(run().gpu(...rows)); // 90000 rows; 65536 % 3 ≠ 0
    const out = await api.getGpu(store, { max_points: 40000 });
    for (let g = 0; g < 3; g++) {
      const lane = out.lanes[`n:${g}`]!;
      expect(lane.ts.length).toBe(30000);
      expect(lane.util[21845]).toBe((21845 + g) % 101); // the tick that crosses the edge
    }
    const low = await outliers(store, "lowest_util", null, null, 3);
    const mean = (g: number) => rows.filter((r) => r.gpu === g).reduce((a, r) => a + r.util, 0) / 30000;
    expect(low.map((o) => o.score).sort()).toEqual([0, 1, 2].map(mean).sort());
    const hm = await heatmap(store, "util", 0, 30000, 2, null);
    expect([...hm.values]).toEqual([255, 255, 255, 255, 255, 255]);
  });
});
