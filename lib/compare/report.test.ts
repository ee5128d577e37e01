import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonical, configDelta, flattenArgs, verdictOf } from "@/lib/compare/args";
import { compareRuns, gpuUtilSummary, type CompareRun } from "@/lib/compare/report";
import { median, spread } from "@/lib/compare/stats";
import { openDumpReader } from "@/lib/store/dumps";
import { ageFiles, writeRollout } from "@/lib/store/dumps/test-fixtures";
import { openMetricStore } from "@/lib/store/telemetry";
import { RunBuilder, makeTmpDir, phase } from "@/lib/store/telemetry/testing";
import type { MetricsRecord } from "@/lib/store/telemetry/types";

const BASE_ARGS = { lr: 1e-6, rollout_batch_size: 32, optim: { beta1: 0.9, beta2: 0.98 }, wandb_group: "run-a", tags: [1, 2] };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function steps(n: number, f: (i: number) => Record<string, number>): MetricsRecord[] {
  return Array.from({ length: n }, (_, i) => ({ ts: 1000 + 10 * i, step_key: "rollout/step", step: i, metrics: { ...f(i), "rollout/step": i } }));
}

function run(name: string, args: Record<string, unknown> | null, recs: MetricsRecord[], extra?: (b: RunBuilder) => void): CompareRun {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  if (args) b.meta({ run_name: name, start_ts: 1000, args });
  b.metrics(...recs);
  extra?.(b);
  const cache = makeTmpDir("rlboard-cmp-cache-");
  dirs.push(cache);
  return {
    id: name,
    name,
    store: openMetricStore(b.runDir, { follow: false, cacheDir: path.join(cache, "t") }),
    dumps: openDumpReader(b.runDir, { cacheDir: path.join(cache, "d") }),
  };
}

describe("args flattening and config delta", () => {
  it("flattens nested objects to dotted paths, keeping arrays and empty objects as leaves", () => {
    expect([...flattenArgs({ a: { b: 1, c: { d: null } }, e: [1, { f: 2 }], g: {} })]).toEqual([
      ["a.b", 1],
      ["a.c.d", null],
      ["e", [1, { f: 2 }]],
      ["g", {}],
    ]);
    expect(canonical({ x: 1, y: [2] })).toBe(canonical({ y: [2], x: 1 }));
  });

  it("lists every differing key with all values, absent keys flagged, identity keys not counted", () => {
    const b = { ...BASE_ARGS, optim: { beta1: 0.9, beta2: 0.95 }, wandb_group: "run-b", extra: true };
    const delta = configDelta([BASE_ARGS, b]);
    expect(delta).toEqual([
      { key: "extra", values: [null, true], absent: [true, false], identity: false },
      { key: "optim.beta2", values: [0.98, 0.95], absent: [false, false], identity: false },
      { key: "wandb_group", values: ["run-a", "run-b"], absent: [false, false], identity: true },
    ]);
    expect(verdictOf([BASE_ARGS, b], delta)).toMatchObject({ kind: "multiple", keys: ["extra", "optim.beta2"] });
  });
});

describe("compareRuns", () => {
  const flat = (i: number) => ({
    "rollout/raw_reward": 0.5 + 0.01 * (i % 3),
    "perf/step_time": 100 + (i % 5),
    "perf/rollout_time": 60,
    "perf/train_time": 40,
    "perf/actor_train_mfu": 0.3,
    "sglang/aborts": i === 7 ? 4 : 0,
  });

  it("one differing key: verdict single naming it; KPI medians, deltas, pct; movers ranked", async () => {
    const a = run("a", BASE_ARGS, steps(11, flat), (b) =>
      b.gpu(...Array.from({ length: 9 }, (_, i) => ({ ts: 1000 + i, node: "n1", gpu: 0, util: 10 * i, mem_mb: 1, power_w: 1 }))),
    );
    const b = run("b", { ...BASE_ARGS, lr: 2e-6, wandb_group: "run-b" }, steps(11, (i) => ({ ...flat(i), "perf/step_time": 80 + (i % 5), "sglang/aborts": 0, "only/b": 1 })));
    const r = await compareRuns([a, b]);
    expect(r.baseline).toBe("a");
    expect(r.runs.map((x) => [x.id, x.has_args])).toEqual([["a", true], ["b", true]]);
    expect(r.verdict).toMatchObject({ kind: "single", keys: ["lr"] });
    expect(r.config_delta.map((d) => d.key)).toEqual(["lr", "wandb_group"]);

    const st = r.kpis.find((k) => k.key === "perf/step_time")!;
    expect(st).toMatchObject({ label: "Step time (s)", statistic: "median", values: [102, 82], delta: [null, -20], n: [11, 11] });
    expect(st.pct[0]).toBeNull();
    expect(st.pct[1]).toBeCloseTo((-20 / 102) * 100, 10);
    const share = r.kpis.find((k) => k.key === "perf/rollout_share")!;
    expect(share.values).toEqual([0.6, 0.6]);
    // both medians zero → the peak, labelled
    expect(r.kpis.find((k) => k.key === "sglang/aborts")).toMatchObject({ statistic: "peak", values: [4, 0], delta: [null, -4], pct: [null, -100] });
    // GPU util only in a: headline row with null for b; metric only in b is not a KPI row
    expect(r.kpis.find((k) => k.key === "gpu/util")).toMatchObject({ values: [40, null], delta: [null, null] });
    expect(r.kpis.some((k) => k.key === "only/b")).toBe(false);
    // every scalar metric both runs have appears
    for (const k of ["rollout/raw_reward", "perf/step_time", "perf/rollout_time", "perf/train_time", "perf/actor_train_mfu", "sglang/aborts", "rollout/step"])
      expect(r.kpis.map((x) => x.key)).toContain(k);
    expect(r.kpis.filter((k) => k.headline).map((k) => k.label)[0]).toBe("Reward mean");

    // movers: step time moved by −20 / (1.4826 · MAD) where the MAD of 100..104 repeating is 1
    const top = r.movers[0]!;
    expect(top.key).toBe("perf/step_time");
    expect(top.spread).toBeCloseTo(1.4826, 10);
    expect(top.shift).toBeCloseTo(-20 / 1.4826, 8);
    expect(r.movers.find((m) => m.key === "perf/actor_train_mfu")!.shift).toBe(0);
    // availability: a has a timeline, b not
    expect(r.availability.changed).toEqual(["timeline"]);
    expect(r.availability.items.find((i) => i.key === "timeline")!.values).toEqual([true, false]);
  });

  it("several differing keys: multiple with the count; identical when only identity keys differ", async () => {
    const a = run("a", BASE_ARGS, steps(3, flat));
    const b = run("b", { ...BASE_ARGS, lr: 3e-6, rollout_batch_size: 64, optim: { beta1: 0.8, beta2: 0.98 } }, steps(3, flat));
    const same = run("c", { ...BASE_ARGS, wandb_group: "run-c" }, steps(3, flat));
    const r = await compareRuns([a, b]);
    expect(r.verdict.kind).toBe("multiple");
    expect(r.verdict.keys).toEqual(["lr", "optim.beta1", "rollout_batch_size"]);
    expect(r.verdict.message).toContain("3 config keys differ");
    const s = await compareRuns([a, same]);
    expect(s.verdict).toMatchObject({ kind: "identical", keys: [] });
    expect(s.config_delta).toEqual([{ key: "wandb_group", values: ["run-a", "run-c"], absent: [false, false], identity: true }]);
    expect(s.kpis.find((k) => k.key === "perf/step_time")!.delta).toEqual([null, 0]);
  });

  it("a run without args: unknown, naming which, never identical", async () => {
    const a = run("a", BASE_ARGS, steps(3, flat));
    const none = run("n", null, steps(3, flat));
    const r = await compareRuns([a, none]);
    expect(r.verdict).toMatchObject({ kind: "unknown", keys: [], missing_args: [1] });
    expect(r.runs[1]!.has_args).toBe(false);
    const empty = run("e", {}, steps(3, flat));
    expect((await compareRuns([empty, a])).verdict.missing_args).toEqual([0]);
  });

  it("dump aggregates give the dump/* KPIs (zero-std groups, staleness) and the dumps availability", async () => {
    const a = run("a", BASE_ARGS, steps(3, flat));
    const b = run("b", BASE_ARGS, steps(3, flat), (x) => x.phases(phase("actor_train", 1000, 1010)));
    const dir = (a.store as unknown as { runDir: string }).runDir;
    for (const rolloutId of [0, 1, 2])
      await writeRollout(dir, rolloutId, [
        { index: 0, response_length: 10, reward: 1, weight_versions: ["1"] },
        { index: 1, response_length: 20, reward: 1, weight_versions: ["1", "2"] },
      ]);
    await ageFiles(dir);
    const r = await compareRuns([a, b]);
    const zs = r.kpis.find((k) => k.label === "Zero-std group fraction")!;
    expect(zs.key).toBe("dump/zero_std_group_frac");
    // raw_reward comes from train shards: without them no group has a reward mean, none is zero-std
    expect(zs.values[0]).toBe(0);
    expect(zs.n).toEqual([3, 0]);
    expect(zs.values[1]).toBeNull();
    expect(r.kpis.find((k) => k.key === "dump/mixed_version_frac")!.values[0]).toBe(0.5);
    expect(r.availability.changed.sort()).toEqual(["dumps", "timeline"]);
  });
});

describe("statistics", () => {
  it("median, scaled MAD and its fallbacks", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNull();
    expect(spread([1, 2, 3, 4, 100])).toBeCloseTo(1.4826, 10);
    expect(spread([5, 5, 5, 9])).toBe(1); // MAD 0 → mean absolute deviation
    expect(spread([5, 5])).toBe(0);
  });

  it("GPU util summary from the histogram equals the sorted computation", async () => {
    const b = new RunBuilder();
    dirs.push(b.runDir);
    const utils = [0, 100, 37, 37, 50, 12, 99, 64];
    b.gpu(...utils.map((u, i) => ({ ts: 1000 + i, node: "n1", gpu: i % 2, util: u, mem_mb: 1, power_w: 1 })));
    const s = (await gpuUtilSummary(openMetricStore(b.runDir, { follow: false })))!;
    expect(s).toEqual({ n: 8, median: median(utils), peak: 100, spread: spread(utils) });
    void os;
  });
});
