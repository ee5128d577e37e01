import { describe, expect, it } from "vitest";
import type { EngineSeriesResponse, MetricsResponse } from "@/lib/charts/api-shapes";
import { golden } from "@/lib/testing/golden";
import {
  engineLabel,
  mergeEngineOrder,
  prepareEngineChart,
  prepareScalarChart,
} from "@/lib/charts/prepare-line";
import { xDomain, yDomain } from "@/lib/charts/core/bounds";

describe("prepareScalarChart", () => {
  it("keeps missing and non-numeric values as gaps, never zeros", () => {
    const m = prepareScalarChart("train/loss", { x: [0, 1, 2, 3], y: [1.5, null, "oops", 0.5], ts: [1, 2, 3, 4] }, "#000");
    const y = Array.from(m.series[0]!.y);
    expect(y[0]).toBe(1.5);
    expect(Number.isNaN(y[1]!)).toBe(true);
    expect(Number.isNaN(y[2]!)).toBe(true);
    expect(y[3]).toBe(0.5);
    expect(m.points).toBe(2);
    expect(m.nonNumeric).toBe(1);
  });

  it("sorts out-of-order steps so the line never runs backwards", () => {
    const m = prepareScalarChart("k", { x: [2, 0, 1], y: [20, 0, 10], ts: [] }, "#000");
    expect(Array.from(m.series[0]!.x)).toEqual([0, 1, 2]);
    expect(Array.from(m.series[0]!.y)).toEqual([0, 10, 20]);
  });

  it("has a signature that changes only when the data does", () => {
    const a = prepareScalarChart("k", { x: [0, 1], y: [1, 2], ts: [] }, "#000");
    const b = prepareScalarChart("k", { x: [0, 1], y: [1, 2], ts: [] }, "#000");
    const c = prepareScalarChart("k", { x: [0, 1, 2], y: [1, 2, 3], ts: [] }, "#000");
    expect(a.signature).toBe(b.signature);
    expect(a.signature).not.toBe(c.signature);
  });

  it("lowers the fixture run's /api/metrics answer", () => {
    const body = golden<MetricsResponse>(
      "/api/metrics?keys=perf/actor_train_mfu,perf/mfu_peak_tflops,perf/step_time,perf/wait_time_ratio,rollout/rewards_mean,dump/reward_mean,dump/zero_std_group_frac",
    );
    const m = prepareScalarChart("rollout/rewards_mean", body["rollout/rewards_mean"], "#d55816");
    expect(Array.from(m.series[0]!.x)).toEqual([0, 1, 2]);
    expect(m.xExtent).toEqual([0, 2]);
    const d = yDomain(m, [0, 2])!;
    expect(d[0]).toBeCloseTo(0.392, 9);
    expect(d[1]).toBeCloseTo(0.508, 9);
    expect(prepareScalarChart("perf/wait_time_ratio", body["perf/wait_time_ratio"], "#000").unit).toBe("fraction");
  });
});

describe("domains", () => {
  it("widens a single value and a single step", () => {
    const m = prepareScalarChart("k", { x: [3], y: [0], ts: [] }, "#000");
    expect(yDomain(m, [0, 10])).toEqual([-0.5, 0.5]);
    expect(xDomain(m)).toEqual([2.5, 3.5]);
  });
});

describe("engine charts", () => {
  const resp: EngineSeriesResponse = {
    series: [
      { addr: "http://10.0.0.1:15004", labels: { dp_rank: "1" }, ts: [1, 2], value: [3, 4] },
      { addr: "http://10.0.0.1:15000", labels: { dp_rank: "0" }, ts: [1, 2], value: [1, null] },
    ],
  };
  it("labels dp ranks and PD roles so series never collide", () => {
    expect(engineLabel(resp.series[0]!)).toBe("http://10.0.0.1:15004 dp1");
    expect(engineLabel({ addr: "a", labels: { engine_type: "prefill" } })).toBe("a prefill");
  });
  it("keeps colours stable page-wide and drops hidden engines from the y-scale", () => {
    const order = mergeEngineOrder([], resp.series.map(engineLabel));
    expect(order).toEqual(["http://10.0.0.1:15000 dp0", "http://10.0.0.1:15004 dp1"]);
    expect(mergeEngineOrder(order, ["http://10.0.0.1:15000 dp0"])).toBe(order);
    const m = prepareEngineChart("sglang_num_running_reqs", resp, order, new Set(["http://10.0.0.1:15004 dp1"]), "light");
    expect(m.series.map((s) => s.label)).toEqual(["10.0.0.1:15000 dp0"]);
    expect(m.series[0]!.color).toBe("#2a78d6");
    expect(yDomain(m, [0, 10])).toEqual([0.5, 1.5]);
    expect(m.xExtent).toEqual([1, 2]);
  });
});

describe("scalar chart x modes (docs/charts.md §6)", () => {
  it("puts points on wall time or time since the run start, keeping each point's step", async () => {
    const { prepareScalarChart } = await import("@/lib/charts/prepare-line");
    const pts = { x: [0, 1, 2], y: [0.5, 0.6, 0.7], ts: [1000, 1010, 1030] };
    const rel = prepareScalarChart("r", pts, "#000", "rel", 990);
    expect([...rel.series[0]!.x]).toEqual([10, 20, 40]);
    expect([...rel.steps]).toEqual([0, 1, 2]);
    expect(rel.xKind).toBe("time");
    const wall = prepareScalarChart("r", pts, "#000", "wall");
    expect([...wall.series[0]!.x]).toEqual([1000, 1010, 1030]);
    const step = prepareScalarChart("r", pts, "#000");
    expect([...step.series[0]!.x]).toEqual([0, 1, 2]);
    expect(step.noTime).toBe(false);
  });
  it("says when the points carry no wall time (dump aggregates)", async () => {
    const { prepareScalarChart } = await import("@/lib/charts/prepare-line");
    const m = prepareScalarChart("dump/x", { x: [0, 1], y: [1, 2], ts: [] }, "#000", "rel", 0);
    expect(m.noTime).toBe(true);
    expect(m.points).toBe(0);
  });
});
