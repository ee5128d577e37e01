import { describe, expect, it } from "vitest";
import { nearestFiniteIndex, nearestIndex, reduceM4, visibleRange, yExtentInWindow } from "@/lib/charts/decimate";

const seq = (n: number, f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i));

describe("reduceM4", () => {
  it("returns raw points when the window holds no more than one per pixel", () => {
    const x = seq(10, (i) => i);
    const y = seq(10, (i) => i * 2);
    const r = reduceM4(x, y, 0, 9, 100);
    expect(r.reduced).toBe(false);
    expect(r.length).toBe(10);
  });

  it("keeps every spike and dip when reducing (min/max, never the mean)", () => {
    const n = 10_000;
    const x = seq(n, (i) => i);
    const y = seq(n, (i) => (i === 4321 ? 1000 : i === 7777 ? -1000 : Math.sin(i / 50)));
    const r = reduceM4(x, y, 0, n - 1, 200);
    expect(r.reduced).toBe(true);
    expect(r.length).toBeLessThanOrEqual(200 * 4 + 8);
    const ys = Array.from(r.y.subarray(0, r.length));
    expect(Math.max(...ys)).toBe(1000);
    expect(Math.min(...ys)).toBe(-1000);
  });

  it("never bridges a gap: a NaN break is emitted and buckets close at it", () => {
    const x = seq(2000, (i) => i);
    const y = seq(2000, (i) => (i >= 1000 && i < 1010 ? Number.NaN : 1));
    const r = reduceM4(x, y, 0, 1999, 50);
    const ys = Array.from(r.y.subarray(0, r.length));
    expect(ys.filter((v) => Number.isNaN(v)).length).toBe(1);
    const raw = reduceM4(seq(5, (i) => i), Float64Array.from([1, Number.NaN, Number.NaN, 2, 3]), 0, 4, 100);
    expect(Array.from(raw.y.subarray(0, raw.length)).map((v) => (Number.isNaN(v) ? "gap" : v))).toEqual([1, "gap", 2, 3]);
  });

  it("draws one neighbour beyond each window edge so lines reach the border", () => {
    const x = seq(100, (i) => i);
    expect(visibleRange(x, 10.5, 20.5)).toEqual([10, 22]);
  });
});

describe("lookups", () => {
  it("finds the nearest sample and skips gaps", () => {
    const x = Float64Array.from([0, 10, 20, 30]);
    const y = Float64Array.from([1, Number.NaN, 3, 4]);
    expect(nearestIndex(x, 12)).toBe(1);
    expect(nearestFiniteIndex(x, y, 12)).toBe(2);
    expect(yExtentInWindow(x, y, 5, 35)).toEqual([3, 4]);
    expect(yExtentInWindow(x, y, 9, 11)).toBeNull();
  });
});
