import { describe, expect, it } from "vitest";
import { prepareOverlay, type OverlayRun } from "@/lib/compare/overlay";

const run = (id: string, points: OverlayRun["points"], startTs: number | null = 1000): OverlayRun => ({ id, name: `Run ${id}`, color: `#${id}${id}${id}`, startTs, points });

describe("prepareOverlay", () => {
  it("one series per run in its colour; a run without the metric is named, not dropped silently", () => {
    const o = prepareOverlay(
      [run("a", { x: [0, 1, 2], y: [1, 2, 3], ts: [1000, 1010, 1020] }), run("b", undefined), run("c", { x: [2, 0, 1], y: [3, "x", true], ts: [1, 2, 3] })],
      "step",
    );
    expect(o.model.series.map((s) => [s.id, s.color, [...s.x], [...s.y]])).toEqual([
      ["a", "#aaa", [0, 1, 2], [1, 2, 3]],
      ["c", "#ccc", [0, 1, 2], [Number.NaN, 1, 3]],
    ]);
    expect(o.missing).toEqual(["Run b"]);
    expect(o.present).toEqual([{ name: "Run a", n: 3 }, { name: "Run c", n: 3 }]);
    expect(o.model.xExtent).toEqual([0, 2]);
    expect(o.model.points).toBe(5);
  });

  it("time axis: seconds since each run's start (start_ts, else its first sample); no timestamps → missing", () => {
    const o = prepareOverlay(
      [run("a", { x: [0, 1], y: [1, 2], ts: [1100, 1200] }), run("b", { x: [0, 1], y: [5, 6], ts: [5050, 5060] }, null), run("d", { x: [0, 1], y: [1, 2], ts: [] })],
      "time",
    );
    expect(o.model.series.map((s) => [...s.x])).toEqual([[100, 200], [0, 10]]);
    expect(o.missing).toEqual(["Run d"]);
  });

  it("typed columns (a binary frame's, NaN for null) give the model the JSON arrays give: skipped null steps, a stable sort of repeated steps", () => {
    const json = { x: [3, null, 1, 1, 2], y: [30, 99, 10, 11, null], ts: [1004, 1005, 1001, 1002, 1003] };
    const cols = { x: Float64Array.from([3, NaN, 1, 1, 2]), y: Float64Array.from([30, 99, 10, 11, NaN]), ts: Float64Array.from(json.ts) };
    for (const mode of ["step", "time"] as const) {
      const a = prepareOverlay([run("a", json)], mode);
      expect(prepareOverlay([run("a", cols)], mode)).toEqual(a);
    }
    const s = prepareOverlay([run("a", cols)], "step").model.series[0]!;
    expect([[...s.x], [...s.y]]).toEqual([
      [1, 1, 2, 3],
      [10, 11, Number.NaN, 30],
    ]);
  });
});
