import { describe, expect, it } from "vitest";
import { viewDomain, xDomain, yDomain } from "@/lib/charts/core/bounds";
import { chartModel, type ChartModel } from "@/lib/charts/core/model";

function line(ys: number[], x0 = 0): ChartModel {
  return chartModel("line", [{ id: "s", label: "s", color: null, x: Float64Array.from(ys, (_, i) => x0 + i), y: Float64Array.from(ys) }]);
}

describe("y domain", () => {
  it("pads y by 8% and widens a flat series by ±0.5 (±5% of large values)", () => {
    expect(yDomain(line([0, 10]), [0, 1])).toEqual([-0.8, 10.8]);
    expect(yDomain(line([2, 2, 2]), [0, 2])).toEqual([1.5, 2.5]);
    expect(yDomain(line([100, 100]), [0, 1])).toEqual([95, 105]);
    const noisy = yDomain(line([0.2, 0.2 + 4e-17, 0.2 - 3e-17]), [0, 2])!;
    expect(noisy[0]).toBeCloseTo(-0.3, 12);
    expect(noisy[1]).toBeCloseTo(0.7, 12);
  });
  it("only counts finite points inside the x window; none ⇒ null", () => {
    expect(yDomain(line([50, 1, 2, 50]), [1, 2])).toEqual([1 - 0.08, 2 + 0.08]);
    expect(yDomain(line([Number.NaN, Number.NaN]), [0, 1])).toBeNull();
  });
  it("scans unsorted scatter points by value", () => {
    const m = chartModel("scatter", [{ id: "s", label: "s", color: null, x: Float64Array.from([5, 1, 3]), y: Float64Array.from([0, 10, 20]) }]);
    expect(yDomain(m, [2, 6])).toEqual([0 - 1.6, 20 + 1.6]);
  });
});

describe("x domain", () => {
  it("includes bands and ignores nothing of a sorted line", () => {
    const m = chartModel("line", line([Number.NaN, 1, 2], 5).series, { bands: [{ x0: 0, x1: 6, strong: true, label: "prompt" }] });
    expect(xDomain(m)).toEqual([0, 7]);
    expect(viewDomain(m, { x: [6, 6.5], y: null })).toEqual({ x: [6, 6.5], y: [0.5, 1.5], inWindow: true });
  });
  it("widens a single point by ±0.5, or ±30 s on a time axis; pads scatter 3%", () => {
    expect(xDomain({ xExtent: [3, 3], xKind: "step", mode: "line" })).toEqual([2.5, 3.5]);
    expect(xDomain({ xExtent: [3, 3], xKind: "time", mode: "line" })).toEqual([-27, 33]);
    expect(xDomain({ xExtent: [0, 100], xKind: "value", mode: "scatter" })).toEqual([-3, 103]);
  });
  it("an empty model shows [0, 1] and says nothing is in the window", () => {
    expect(viewDomain(chartModel("line", []), { x: null, y: null })).toEqual({ x: [0, 1], y: [0, 1], inWindow: false });
  });
});

describe("chartModel", () => {
  it("counts finite points and takes the x extent from hidden series too", () => {
    const hidden = { id: "h", label: "h", color: null, x: Float64Array.from([-5, 20]), y: Float64Array.from([1, 1]) };
    const m = chartModel("line", line([1, Number.NaN, 3]).series, { extentOnly: [hidden] });
    expect(m.points).toBe(2);
    expect(m.xExtent).toEqual([-5, 20]);
  });
});

describe("constant series (issue #15 defect 8)", () => {
  it("centres a tiny constant instead of drawing it on the 0 gridline", async () => {
    const { constantValue, flatDomain } = await import("@/lib/charts/core/bounds");
    const d = yDomain(line([1e-6, 1e-6, 1e-6]), [0, 2])!;
    expect(d[0]).toBeCloseTo(5e-7, 18);
    expect(d[1]).toBeCloseTo(1.5e-6, 18);
    expect(d[0]).toBeGreaterThan(0);
    expect(flatDomain(0)).toEqual([-0.5, 0.5]);
    const f = flatDomain(-2e-5);
    expect(f[0]).toBeCloseTo(-3e-5, 18);
    expect(f[1]).toBeCloseTo(-1e-5, 18);
    expect(constantValue(line([1e-6, Number.NaN, 1e-6]))).toBe(1e-6);
    expect(constantValue(line([0.2, 0.2 + 4e-17]))).toBe(0.2);
    expect(constantValue(line([1, 2]))).toBeNull();
    expect(constantValue(line([Number.NaN]))).toBeNull();
  });
});
