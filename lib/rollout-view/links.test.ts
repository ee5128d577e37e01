import { describe, expect, it } from "vitest";
import { parseTimelineState } from "@/lib/charts/timeline-url";
import { candidateSteps, engineLanes, metricsHref, padWindow, sampleEngines, sampleGenSpans, samplesGeneratingIn, spansWindow, stepWindow, timelineHref, type LinkLane } from "./links";

const lane = (i: number, segs: [number | null, number | null][], kind = "gen"): LinkLane => ({
  sample_index: i,
  first_ts: Math.min(...segs.map((s) => s[0] ?? Infinity)),
  last_ts: Math.max(...segs.map((s) => s[1] ?? -Infinity)),
  segments: segs.map(([t0, t1], k) => ({ kind, t0, t1, turn: k + 1 })),
});

describe("view links", () => {
  it("a step window round-trips through the timeline URL state (padded 5 %, step picked)", () => {
    const href = timelineHref("run/a b", { t0: 1000, t1: 1100 }, { step: 3, lanes: "engine:http://10.0.0.1:15000" });
    expect(href.startsWith("/runs/run%2Fa%20b/timeline?")).toBe(true);
    const st = parseTimelineState(new URLSearchParams(href.split("?")[1]));
    expect(st.viewport).toEqual({ v0: 995, v1: 1105 });
    expect(st.step).toBe(3);
    expect(st.lanes).toBe("engine:http://10.0.0.1:15000");
  });

  it("pads at least 1 s and caps the window at 4 h around the centre", () => {
    expect(padWindow({ t0: 10, t1: 10 })).toEqual({ t0: 9, t1: 11 });
    const w = padWindow({ t0: 0, t1: 20000 });
    expect(w.t1 - w.t0).toBe(14400);
    expect((w.t0 + w.t1) / 2).toBe(10000);
  });

  it("step window: the bubble span first, else first submit → consume from trajectories", () => {
    const bubbles = [
      { step: 0, ts: 1100, step_time: 100, wait_ratio: 0.1 },
      { step: 1, ts: 1250, step_time: 150, wait_ratio: 0.2 },
    ];
    expect(stepWindow(1, bubbles, null)).toEqual({ window: { t0: 1100, t1: 1250 }, source: "step time" });
    const traj = { lanes: [lane(0, [[500, 520]]), lane(1, [[505, 540]])], consume_ts: 560 };
    expect(stepWindow(7, bubbles, traj)).toEqual({ window: { t0: 500, t1: 560 }, source: "trajectories" });
    expect(stepWindow(7, bubbles, { lanes: [], consume_ts: 560 })).toBeNull();
  });

  it("sample spans: trajectory gen segments, else the trace's requests with their engines", () => {
    const l: LinkLane = { sample_index: 4, first_ts: 100, last_ts: 130, segments: [
      { kind: "gen", t0: 110, t1: 120, turn: 2 },
      { kind: "tool", t0: 120, t1: 125, turn: 2 },
      { kind: "gen", t0: 100, t1: 108, turn: 1 },
      { kind: "gen", t0: 126, t1: null, turn: 3 },
    ] };
    expect(sampleGenSpans(l, null)).toEqual([
      { t0: 100, t1: 108, turn: 1, engine: null },
      { t0: 110, t1: 120, turn: 2, engine: null },
    ]);
    const reqs = [{ engine: "http://e1", start: 5, end: 9 }, { engine: "http://e2", start: 1, end: 3 }, { engine: "http://e1", start: 10, end: null }];
    expect(sampleGenSpans(null, reqs).map((s) => [s.t0, s.engine])).toEqual([[1, "http://e2"], [5, "http://e1"]]);
    expect(sampleEngines(reqs)).toEqual(["http://e1", "http://e2"]);
    expect(engineLanes(["http://e1", "http://e2"])).toBe("engine:http://e1,engine:http://e2");
    expect(engineLanes([])).toBeNull();
    expect(spansWindow(sampleGenSpans(l, null))).toEqual({ t0: 100, t1: 120 });
    expect(spansWindow([])).toBeNull();
  });

  it("samples generating in a window, and the steps to look in", () => {
    const lanes = [lane(3, [[100, 110]]), lane(1, [[200, 210]]), lane(2, [[105, 300]]), lane(9, [[50, 60]], "tool")];
    expect(samplesGeneratingIn(lanes, 108, 150)).toEqual([2, 3]);
    expect(samplesGeneratingIn(lanes, 111, 150)).toEqual([2]);
    expect(candidateSteps([2, 3], [0, 1, 2, 3, 4, 5, 6])).toEqual([2, 3, 4, 5]);
    expect(candidateSteps([], [0, 1])).toEqual([]);
    expect(candidateSteps([0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6, 7, 8])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(metricsHref("r", 4)).toBe("/runs/r/metrics?step=4");
  });
});
