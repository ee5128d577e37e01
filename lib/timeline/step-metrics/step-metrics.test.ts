import { describe, expect, it } from "vitest";
import { getMetrics } from "@/lib/timeline/metrics";
import type { StepMetricFamily, StepMetricInput } from "@/lib/timeline/step-metrics";
import { derivedMetricKeys, derivedMetricSeries, familyOf } from "@/lib/timeline/step-metrics";
import type { MetricStore } from "@/lib/store/telemetry";
import type { DumpSource } from "@/lib/timeline/dump-source";

function family(name: string, prefix: string, keys: string[], calls: string[][]): StepMetricFamily {
  return {
    name,
    owns: (k) => k.startsWith(prefix),
    keys: async () => keys,
    series: async (_i, ks) => {
      calls.push([...ks]);
      return Object.fromEntries(ks.map((k, j) => [k, { x: [0, 1], y: [j, j + 0.5], ts: [0, 0] }]));
    },
  };
}

const store = { metrics: async () => [{ step_key: "rollout/step", step: 3, ts: 10, metrics: { "train/loss": 0.25 } }] } as unknown as MetricStore;
const dumps = {} as DumpSource;
const input: StepMetricInput = { store, dumps };

describe("step metric families", () => {
  it("routes each key to the family that owns it, one call per family", async () => {
    const calls: string[][] = [];
    const fams = [family("a", "drift/", ["drift/p99"], calls), family("b", "perf/request/", ["perf/request/count"], calls)];
    expect(familyOf("drift/p50", fams)?.name).toBe("a");
    expect(familyOf("train/loss", fams)).toBeNull();
    const out = await derivedMetricSeries(input, ["drift/p99", "perf/request/count", "drift/p50"], fams);
    expect(calls).toEqual([["drift/p99", "drift/p50"], ["perf/request/count"]]);
    expect(out["drift/p50"]).toEqual({ x: [0, 1], y: [1, 1.5], ts: [0, 0] });
  });

  it("lists keys in family order and drops a failing family", async () => {
    const bad: StepMetricFamily = { name: "bad", owns: () => false, keys: () => Promise.reject(new Error("x")), series: async () => ({}) };
    expect(await derivedMetricKeys(input, [family("a", "drift/", ["drift/p99"], []), bad, family("b", "perf/", ["perf/x"], [])])).toEqual([
      "drift/p99",
      "perf/x",
    ]);
  });

  it("/api/metrics answers store keys and derived keys together", async () => {
    const out = await getMetrics(store, dumps, { keys: "train/loss,drift/p99", x: "rollout/step", t0: null, t1: null }, [
      family("a", "drift/", ["drift/p99"], []),
    ]);
    expect(out["train/loss"]).toEqual({ x: [3], y: [0.25], ts: [10] });
    expect(out["drift/p99"]).toEqual({ x: [0, 1], y: [0, 0.5], ts: [0, 0] });
  });
});
