import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { computeAdvisories, getAdvisory, mfuSummary, type Advisory } from "@/lib/advisory";
import { fmt, G, P0, P1 } from "@/lib/advisory/format";
import { ApiError } from "@/lib/contracts/errors";
import { openMetricStore, type MetricStore, type MetricsRecord } from "@/lib/store/telemetry";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { phase, RunBuilder, type EngineRow } from "@/lib/store/telemetry/testing";
import type { DumpSource, DumpTable } from "@/lib/timeline/dump-source";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function run(args: Record<string, unknown> = {}, startTs = 0): RunBuilder {
  const b = new RunBuilder().meta({ start_ts: startTs, args });
  dirs.push(b.runDir);
  return b;
}
const open = (b: RunBuilder) => openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });

function dumps(o: { train?: number[]; groups?: Record<string, unknown>[]; summary?: Record<string, unknown>[]; columns?: string[] } = {}): DumpSource {
  const table = (rows: Record<string, unknown>[], columns: string[]): DumpTable => ({ rollout_id: 0, evaluation: false, columns, rows });
  return {
    listRolloutIds: async () => ({ train: o.train ?? [], eval: [] }),
    hasTokenizer: async () => false,
    stepAggregates: async () => [],
    summary: async () => table(o.summary ?? [], o.columns ?? ["sample_index", "truncated"]),
    groups: async () => table(o.groups ?? [], ["group_index", "reward_mean", "zero_std"]),
  };
}

async function advise(b: RunBuilder, d: DumpSource = dumps(), window: { t0?: number; t1?: number } = {}, lowMfu = 0.15): Promise<Advisory[]> {
  const store = open(b);
  return computeAdvisories({ store, dumps: d, t0: window.t0 ?? null, t1: window.t1 ?? null, mfu: await mfuSummary(store), lowMfu });
}
const A = "http://10.0.0.1:15000";
const eng = (ts: number, metric: string, value: number, labels: Record<string, string> = {}, addr = A): EngineRow => ({ ts, addr, metric, labels, value });
const mfuRecs = (values: number[], peak: number | null = 989.0): MetricsRecord[] =>
  values.map((v, i) => {
    const metrics: Record<string, number> = { "perf/actor_train_mfu": v };
    if (peak !== null) metrics["perf/mfu_peak_tflops"] = peak;
    return { ts: 100 + i, step_key: "rollout/step", step: i, metrics };
  });

describe("message formatting", () => {
  it("formats durations, percentages and %g like the reference", () => {
    expect(fmt(1800)).toBe("30min");
    expect(fmt(5400)).toBe("1.5h");
    expect(fmt(42)).toBe("42s");
    expect(P0(0.4)).toBe("40%");
    expect(P1(0.1)).toBe("10.0%");
    expect(G(989.0)).toBe("989");
    expect(G(0.7)).toBe("0.7");
  });
});

describe("stall watchdog", () => {
  const closed = [0, 100, 200].map((t) => phase("train_wait", t, t + 10));

  it("flags a phase open far longer than its median as critical", async () => {
    const b = run().phases(...closed, phase("train_wait", 300, -1), phase("train_wait", 300, -1, { rank: 1 })).gpu({ ts: 2500, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    const out = await advise(b);
    expect(out).toHaveLength(1);
    expect(out[0]!.level).toBe("critical");
    expect(out[0]!.message).toContain("'train_wait' has been open for 37min on 2 rank(s), 220x its median duration (10s)");
    expect(out[0]!.message).toContain("stalled, not slow");
    expect(out[0]!.message).toContain("starved of rollout data");
  });

  it("needs 3 closed instances and an age above max(6×median, 30 min)", async () => {
    const few = run().phases(closed[0]!, closed[1]!, phase("train_wait", 300, -1)).gpu({ ts: 9000, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    expect(await advise(few)).toEqual([]);
    const young = run().phases(...closed, phase("train_wait", 300, -1)).gpu({ ts: 2000, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    expect(await advise(young)).toEqual([]);
  });

  it("ignores markers that have a closed twin and events of an earlier attempt", async () => {
    const twin = run().phases(...closed, phase("train_wait", 300, -1), phase("train_wait", 300, 310)).gpu({ ts: 9000, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    expect(await advise(twin)).toEqual([]);
    const resumed = run({}, 5000).phases(...closed, phase("train_wait", 300, -1)).gpu({ ts: 9000, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    expect(await advise(resumed)).toEqual([]);
  });
});

describe("engine alarms", () => {
  it("flags an abort storm over the last 30 minutes of engine data", async () => {
    const b = run({ n_samples_per_prompt: 8 }).engine(
      eng(0, "sglang_num_requests_total", 0),
      eng(1000, "sglang_num_requests_total", 750),
      eng(4000, "sglang_num_requests_total", 2250),
      eng(0, "sglang_num_aborted_requests_total", 0),
      eng(1000, "sglang_num_aborted_requests_total", 0),
      eng(4000, "sglang_num_aborted_requests_total", 900),
    );
    const [a, ...rest] = await advise(b);
    expect(rest).toEqual([]);
    expect(a!.level).toBe("warning");
    expect(a!.message).toContain("60% of engine requests were aborted client-side in the last 30min");
    expect(a!.message).toContain("(900/1500; 40% over the run)");
    expect(a!.message).toContain("8-sample group");
  });

  it("does not flag fewer than 100 requests or a restart's counter reset", async () => {
    const b = run().engine(
      eng(0, "sglang_num_requests_total", 500),
      eng(10, "sglang_num_requests_total", 5), // restart
      eng(20, "sglang_num_requests_total", 50),
      eng(0, "sglang_num_aborted_requests_total", 0),
      eng(20, "sglang_num_aborted_requests_total", 40),
    );
    expect(await advise(b)).toEqual([]);
  });

  it("calls a pegged KV pool with low concurrency KV-pool-bound", async () => {
    const b = run({ sglang_max_running_requests: 256, sglang_mem_fraction_static: 0.7 }).engine(
      eng(1, "sglang_token_usage", 0.93),
      eng(1, "sglang_num_running_reqs", 40),
    );
    const [a] = await advise(b);
    expect(a!.message).toContain("KV cache usage is pegged at 93%");
    expect(a!.message).toContain("peak concurrency (40)");
    expect(a!.message).toContain("--sglang-max-running-requests (256)");
    expect(a!.message).toContain("KV-pool-bound");
    expect(a!.message).toContain("(currently 0.7)");
    expect(a!.message).toContain("do NOT lower");
  });

  it("calls very high KV usage at high concurrency a throughput bottleneck", async () => {
    const b = run({ sglang_max_running_requests: 256 }).engine(eng(1, "sglang_token_usage", 0.97), eng(1, "sglang_num_running_reqs", 250));
    const [a] = await advise(b);
    expect(a!.message).toContain("consistently high (97.0%)");
    expect(a!.message).toContain("throughput");
  });
});

describe("whole-run scans kept across a restart", () => {
  it("answers the stall and abort-storm rules from the data dir without reading the partitions again", async () => {
    const H = 3600;
    const b = run({ n_samples_per_prompt: 8 })
      .phases(...[0, 100, 200].map((t) => phase("train_wait", t, t + 10)), phase("train_wait", 300, -1))
      .engine(
        eng(0, "sglang_num_requests_total", 0),
        eng(H + 1000, "sglang_num_requests_total", 750),
        eng(H + 4000, "sglang_num_requests_total", 2250),
        eng(0, "sglang_num_aborted_requests_total", 0),
        eng(H + 1000, "sglang_num_aborted_requests_total", 0),
        eng(H + 4000, "sglang_num_aborted_requests_total", 900),
      )
      .gpu({ ts: 9000, node: "n1", gpu: 0, util: 0, mem_mb: 0, power_w: 0 });
    const cacheDir = fs.mkdtempSync(`${b.runDir}-cache`);
    dirs.push(cacheDir);
    const withCache = () => openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, cacheDir });
    const ask = async (store: MetricStore) => computeAdvisories({ store, dumps: dumps(), t0: null, t1: null, mfu: null, lowMfu: 0.15 });
    const expected = await advise(b);
    expect(expected.map((a) => a.level)).toEqual(["critical", "warning"]);
    expect(await ask(withCache())).toEqual(expected);
    await flushBinaryCache();
    const restarted = withCache();
    expect(await ask(restarted)).toEqual(expected);
    expect((await restarted.phases.files()).every((f) => f.block === null)).toBe(true);
    expect((await restarted.engine.files()).every((f) => f.block === null)).toBe(true);
    // an engine file that changes is a new version: the counts are recomputed
    b.engine(eng(H + 4100, "sglang_num_requests_total", 2350), eng(H + 4100, "sglang_num_aborted_requests_total", 1000));
    const [, storm] = await ask(withCache());
    expect(storm!.message).toContain("(1000/1600;");
    expect(storm).toEqual((await advise(b))[1]);
  });
});

describe("rollout rules", () => {
  it("flags degenerate groups on the newest rollout, pointing at systematic failure when all rewards are 0", async () => {
    const groups = [
      { group_index: 0, reward_mean: 0, zero_std: true },
      { group_index: 1, reward_mean: 0, zero_std: true },
      { group_index: 2, reward_mean: null, zero_std: false },
    ];
    const [a] = await advise(run(), dumps({ train: [0, 3], groups }));
    expect(a!.message).toContain("2/2 groups in rollout 3 have zero reward std");
    expect(a!.message).toContain("systematic failure");
    const mixed = [...groups, ...[3, 4, 5].map((g) => ({ group_index: g, reward_mean: 0.5, zero_std: false }))];
    expect(await advise(run(), dumps({ train: [3], groups: mixed }))).toEqual([]);
  });

  it("flags truncation with the response-length cap", async () => {
    const summary = [{ truncated: true }, { truncated: false }, { truncated: false }, { truncated: false }];
    const [a] = await advise(run({ rollout_max_response_len: 8192 }), dumps({ train: [1], summary }));
    expect(a!.message).toContain("25% of samples in rollout 1 are truncated");
    expect(a!.message).toContain("--rollout-max-response-len (8192)");
  });

  it("reports unplaceable CP slices as info (which still counts as an alarm)", async () => {
    const summary = [{ truncated: false, alignment_failed: true }, { truncated: false, alignment_failed: false }];
    const b = run().metrics(...mfuRecs([0.1, 0.1, 0.1, 0.1]));
    const out = await advise(b, dumps({ train: [2], summary, columns: ["truncated", "alignment_failed"] }));
    expect(out).toEqual([{ level: "info", message: expect.stringContaining("blank for 1 samples in rollout 2") as string }]);
  });

  it("has nothing to say without visible train rollouts", async () => {
    expect(await advise(run(), dumps({ train: [] }))).toEqual([]);
  });
});

describe("tuning rules", () => {
  it("summarises MFU without the warm-up step and warns when it is low", async () => {
    const b = run().metrics(...mfuRecs([0.5, 0.1, 0.1, 0.1]));
    const store = open(b);
    expect(await mfuSummary(store)).toEqual({ latest: 0.1, mean: expect.closeTo(0.1, 12) as number, steps: 3, peak: 989 });
    const [a] = await advise(b);
    expect(a!.level).toBe("warning");
    expect(a!.message).toContain("10.0%");
    expect(a!.message).toContain("989 TFLOP/s");
    expect(a!.message).toContain("rollout stalls cannot depress it");
    expect(await advise(b, dumps(), {}, 0)).toEqual([]);
  });

  it("returns a null peak when the peak key was never logged", async () => {
    expect(await mfuSummary(open(run().metrics(...mfuRecs([0.5, 0.4], null))))).toEqual({ latest: 0.4, mean: 0.4, steps: 1, peak: null });
    expect(await mfuSummary(open(run()))).toBeNull();
  });

  it("suggests lowering an oversized request cap and raising the KV cache for a low hit rate", async () => {
    const b = run({ sglang_max_running_requests: 512, sglang_mem_fraction_static: 0.8 }).engine(
      eng(1, "sglang_num_running_reqs", 100),
      eng(1, "sglang_cache_hit_rate", 0.05),
    );
    const out = await advise(b);
    expect(out.map((a) => a.level)).toEqual(["info", "info"]);
    expect(out[0]!.message).toContain("concurrency (100) stayed under 30% of --sglang-max-running-requests (512)");
    expect(out[1]!.message).toContain("Prefix cache hit rate is low (5.0%)");
    expect(out[1]!.message).toContain("(currently 0.8)");
    const colocated = run({ sglang_max_running_requests: 512, colocate: true }).engine(eng(1, "sglang_num_running_reqs", 100), eng(1, "sglang_cache_hit_rate", 0.05));
    const [only, ...none] = await advise(colocated);
    expect(none).toEqual([]);
    expect(only!.message).toContain("to free memory for training (colocate)");
  });

  const imbalanced = (args: Record<string, unknown>) =>
    run(args).engine(
      eng(1, "sglang_num_running_reqs", 11, { dp_rank: "0" }),
      eng(1, "sglang_num_running_reqs", 0.5, { dp_rank: "1" }),
      eng(1, "sglang_num_running_reqs", 9, { dp_rank: "10" }),
    );

  it.each([
    [{ use_miles_router: true }, "--sglang-load-balance-method decides the rank"],
    [{ router_dp_aware: false }, "--router-dp-aware makes it route per rank"],
    [{ router_dp_aware: true, sglang_router_policy: "manual", router_assignment_mode: "hash" }, "--router-assignment-mode (hash)"],
    [{ router_dp_aware: true, router_policy: "cache_aware" }, "--router-policy (cache_aware) picks the rank"],
  ])("names the knob that decides dp-rank routing (%o)", async (args, knob) => {
    const out = await advise(imbalanced({ ...args, colocate: true }));
    expect(out).toHaveLength(1);
    expect(out[0]!.message).toContain(`${A}: dp ranks imbalanced (mean running reqs dp0=11.0, dp1=0.5, dp10=9.0)`);
    expect(out[0]!.message).toContain(knob);
  });

  it("stays silent when alarms exist (tiering)", async () => {
    const b = run({ sglang_max_running_requests: 512 })
      .metrics(...mfuRecs([0.5, 0.1, 0.1, 0.1]))
      .engine(eng(1, "sglang_num_running_reqs", 10), eng(1, "sglang_token_usage", 0.99));
    const out = await advise(b);
    expect(out.map((a) => a.message.slice(0, 20))).toEqual(["KV cache usage is pe"]);
  });
});

describe("GET /api/advisory body", () => {
  it("checks the window and returns advisories with the MFU summary", async () => {
    const store = open(run().metrics(...mfuRecs([0.38, 0.36, 0.34])));
    const body = await getAdvisory({ store, dumps: dumps(), settings: { lowMfuThreshold: 0.15 } }, { t0: 0, t1: 10 });
    expect(body.advisories).toEqual([]);
    expect(body.mfu).toEqual({ latest: 0.34, mean: 0.35, steps: 2, peak: 989 });
    const err = await getAdvisory({ store, dumps: dumps(), settings: { lowMfuThreshold: 0.15 } }, { t0: 0, t1: 20000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toContain("max_window_s");
  });
});
