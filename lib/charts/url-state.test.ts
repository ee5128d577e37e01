import { describe, expect, it } from "vitest";
import { neighbourId, parseMetricsState, writeMetricsState } from "@/lib/charts/metrics-url";
import { parseTimelineState, writeTimelineState } from "@/lib/charts/timeline-url";

describe("metrics URL state", () => {
  it("round-trips category, filter, zoom, dp split, hidden engines and step", () => {
    const q = writeMetricsState(new URLSearchParams("keep=1"), {
      category: "perf",
      filter: "step time",
      x: [1, 5],
      y: { "perf/step_time": [90, 96] },
      perDpRank: true,
      hidden: ["http://a:1"],
      step: 2,
    });
    const s = parseMetricsState(new URLSearchParams(q.slice(1)));
    expect(s).toEqual({ category: "perf", filter: "step time", x: [1, 5], y: { "perf/step_time": [90, 96] }, perDpRank: true, hidden: ["http://a:1"], step: 2 });
    expect(new URLSearchParams(q.slice(1)).get("keep")).toBe("1");
  });
  it("drops cleared values", () => {
    expect(writeMetricsState(new URLSearchParams("cat=a&x=1~2"), { x: null, category: null })).toBe("");
  });
});

describe("timeline URL state", () => {
  it("keeps lanes readable and round-trips the view", () => {
    const q = writeTimelineState(new URLSearchParams(), { lanes: "g:0-31,rank:2", viewport: { v0: 100, v1: 200 }, overlay: null, mem: true, carpet: "phase" });
    expect(q).toContain("lanes=g:0-31,rank:2");
    const s = parseTimelineState(new URLSearchParams(q.slice(1)));
    expect(s.lanes).toBe("g:0-31,rank:2");
    expect(s.viewport).toEqual({ v0: 100, v1: 200 });
    expect(s.overlay).toBeNull();
    expect(s.mem).toBe(true);
    expect(s.carpet).toBe("phase");
  });
  it("tells 'no lanes param' (default may apply) from an explicit empty one", () => {
    expect(parseTimelineState(new URLSearchParams("")).lanes).toBeNull();
    expect(parseTimelineState(new URLSearchParams("lanes=")).lanes).toBe("");
    expect(parseTimelineState(new URLSearchParams("")).overlay).toBeUndefined();
  });
});

describe("readable query", () => {
  it("keeps grammar and zoom characters readable but encodes a literal percent", () => {
    const q = writeMetricsState(new URLSearchParams(), { x: [1, 2], y: { "perf/step_time": [3, 4] }, filter: "a%3Ab" });
    expect(q).toContain("x=1~2");
    expect(q).toContain("y:perf/step_time=3~4");
    expect(parseMetricsState(new URLSearchParams(q.slice(1))).filter).toBe("a%3Ab");
  });
});

describe("step cursor keys", () => {
  it("moves to the next/previous id, stops at the ends, starts at the first or last", () => {
    const ids = [0, 2, 5];
    expect(neighbourId(ids, null, 1)).toBe(0);
    expect(neighbourId(ids, null, -1)).toBe(5);
    expect(neighbourId(ids, 2, 1)).toBe(5);
    expect(neighbourId(ids, 3, -1)).toBe(2);
    expect(neighbourId(ids, 5, 1)).toBe(5);
    expect(neighbourId(ids, 0, -1)).toBe(0);
  });
});
