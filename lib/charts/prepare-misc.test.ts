import { describe, expect, it } from "vitest";
import type { BubblesResponse, FleetResponse } from "@/lib/charts/api-shapes";
import { freshness } from "@/lib/charts/freshness";
import { golden } from "@/lib/testing/golden";
import { neighbourStep, prepareSteps, stepAt, stepsInView, waitAlpha } from "@/lib/charts/prepare-bubbles";
import { compositionAt, prepareFleet } from "@/lib/charts/prepare-fleet";
import { seriesColor } from "@/lib/charts/palette";

describe("fleet", () => {
  const f: FleetResponse = {
    t0: 0,
    t1: 40,
    x_buckets: 4,
    lanes: 2,
    palette: ["", "actor_train", "rollout"],
    composition: { none: [0.5, 0, 0, 1], actor_train: [0, 0, 1, 0], rollout: [0.5, 1, 0, 0] },
    band: { p10: [20, 90, 95, null], p50: [90, 90, 95, null], p90: [90, 90, 95, null], min: [20, 90, 95, null] },
  };
  it("stacks phases in palette order and keeps empty buckets as gaps", () => {
    const m = prepareFleet(f);
    expect(m.phases).toEqual(["actor_train", "rollout"]);
    expect(Array.from(m.stack[1]!)).toEqual([0.5, 1, 1, 0]);
    expect(Number.isNaN(m.p50[3]!)).toBe(true);
    expect(compositionAt(m, 0)).toEqual([{ phase: "rollout", fraction: 0.5 }]);
  });
  it("reads the fixture fleet", () => {
    const m = prepareFleet(golden<FleetResponse>("/api/timeline/fleet?t0=1000000.0&t1=1000329.0&x_buckets=50"));
    expect(m.lanes).toBe(4);
    expect(m.hasPhases && m.hasBand).toBe(true);
  });
});

describe("bubbles", () => {
  const bubbles: BubblesResponse["bubbles"] = [
    { step: 0, ts: 1000125, step_time: 95, wait_ratio: 0.4 },
    { step: 1, ts: 1000225, step_time: 94, wait_ratio: 0.3 },
    { step: 2, ts: 1000325, step_time: null, wait_ratio: null },
  ];
  it("spans each step over its step time, shading on an absolute scale", () => {
    const s = prepareSteps(bubbles);
    expect(s[0]).toEqual({ step: 0, t0: 1000030, t1: 1000125, waitRatio: 0.4, stepTime: 95 });
    expect(s[2]!.t0).toBe(1000225);
    expect(waitAlpha(0.4)).toBeCloseTo(0.34);
    expect(waitAlpha(null)).toBe(0);
    expect(stepAt(s, 1000200)?.step).toBe(1);
    expect(stepsInView(s, 1000130, 1000140).map((x) => x.step)).toEqual([1]);
    expect(neighbourStep(s, 1, 0, 1)?.step).toBe(2);
    expect(neighbourStep(s, null, 1000200, -1)?.step).toBe(0);
  });
});

describe("freshness", () => {
  it("reads live, stale, static, waiting and offline", () => {
    expect(freshness({ mode: "follow", t1: 100, nowS: 110 }).state).toBe("live");
    expect(freshness({ mode: "follow", t1: 100, nowS: 1000 }).state).toBe("stale");
    expect(freshness({ mode: "static", t1: 100, nowS: 1000 }).state).toBe("static");
    expect(freshness({ mode: "follow", t1: null, nowS: 1000 }).state).toBe("waiting");
    expect(freshness({ mode: "follow", t1: 100, nowS: 110, failing: true }).state).toBe("offline");
  });
});

describe("palette", () => {
  it("does not repeat a colour within 24 series", () => {
    const c = Array.from({ length: 24 }, (_, i) => seriesColor(i));
    expect(new Set(c).size).toBe(24);
    expect(c[0]).toBe("#2a78d6");
  });
});
