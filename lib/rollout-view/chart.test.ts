import { describe, expect, it } from "vitest";
import { envelope, nearestByX, niceTicks, resolveDrag, viewDomain, xExtent, yExtent, type ChartModel } from "./chart";

function line(ys: number[], x0 = 0): ChartModel {
  return {
    mode: "line",
    x: Float64Array.from(ys, (_, i) => x0 + i),
    y: Float64Array.from(ys),
    flag: null,
    bands: [],
    xLabel: "x",
    yLabel: "y",
    tooltip: (i) => String(i),
  };
}

describe("domains", () => {
  it("pads y by 8% and widens a flat series by ±0.5", () => {
    expect(yExtent(line([0, 10]), [0, 1])).toEqual([-0.8, 10.8]);
    expect(yExtent(line([2, 2, 2]), [0, 2])).toEqual([1.5, 2.5]);
  });
  it("ignores gaps and includes bands in x", () => {
    const m = line([Number.NaN, 1, 2], 5);
    m.bands.push({ x0: 0, x1: 6, strong: true, label: "prompt" });
    expect(xExtent(m)).toEqual([0, 7]);
    expect(viewDomain(m, { x: [6, 6.5], y: null }).y).toEqual([0.5, 1.5]);
  });
});

describe("niceTicks", () => {
  it("uses 1/2/5 steps", () => {
    expect(niceTicks([0, 1], 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks([3, 97], 5)).toEqual([20, 40, 60, 80]);
  });
});

describe("envelope", () => {
  it("keeps raw points up to 700 visible and a min/max per pixel above", () => {
    expect(envelope(line(Array.from({ length: 700 }, () => 1)), [0, 699], 100)).toBeNull();
    const ys = Array.from({ length: 8000 }, () => 0);
    ys[4321] = 50; // one spike must survive
    const cols = envelope(line(ys), [0, 7999], 400)!;
    expect(cols.length).toBeLessThanOrEqual(400);
    expect(Math.max(...cols.map((c) => c.max))).toBe(50);
  });
  it("closes a column at a gap", () => {
    const ys = Array.from({ length: 1000 }, (_, i) => (i >= 500 && i < 520 ? Number.NaN : 1));
    const cols = envelope(line(ys), [0, 999], 50)!;
    expect(cols.filter((c) => c.gapBefore)).toHaveLength(1);
  });
});

describe("nearestByX", () => {
  it("skips null points", () => {
    const m = line([1, Number.NaN, Number.NaN, 4]);
    expect(nearestByX(m, 1.2)).toBe(0);
    expect(nearestByX(m, 2.6)).toBe(3);
  });
});

describe("resolveDrag (10px rule)", () => {
  const inv = (p: number) => p;
  it("treats a tiny move as a click", () => {
    expect(resolveDrag({ x0: 10, y0: 10, x1: 12, y1: 13 }, { x: null, y: null }, inv, inv)).toEqual({ kind: "click" });
  });
  it("a horizontal sweep zooms x and re-fits y", () => {
    expect(resolveDrag({ x0: 50, y0: 10, x1: 20, y1: 14 }, { x: null, y: [0, 1] }, inv, inv)).toEqual({ kind: "zoom", zoom: { x: [20, 50], y: null } });
  });
  it("a box zooms both axes; a vertical sweep keeps the x zoom", () => {
    expect(resolveDrag({ x0: 0, y0: 0, x1: 30, y1: 30 }, { x: null, y: null }, inv, inv)).toEqual({ kind: "zoom", zoom: { x: [0, 30], y: [0, 30] } });
    expect(resolveDrag({ x0: 5, y0: 0, x1: 8, y1: 40 }, { x: [1, 2], y: null }, inv, inv)).toEqual({ kind: "zoom", zoom: { x: [1, 2], y: [0, 40] } });
  });
});
