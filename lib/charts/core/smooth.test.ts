import { describe, expect, it } from "vitest";
import { decodeSmoothing, ema, encodeSmoothing, runningMean, smooth } from "@/lib/charts/core/smooth";

const NaN_ = Number.NaN;

describe("debiased EMA", () => {
  it("matches the TensorBoard/W&B formula value by value", () => {
    // w = 0.5: last = .5·last + .5·y; shown last / (1 − .5^n)
    const out = ema([2, 4, 8], 0.5);
    expect(out[0]).toBeCloseTo(2, 12); // 1 / 0.5
    expect(out[1]).toBeCloseTo(2.5 / 0.75, 12); // (0.5 + 2) / 0.75 = 3.333…
    expect(out[2]).toBeCloseTo(5.25 / 0.875, 12); // (1.25 + 4) / 0.875 = 6
  });
  it("is the raw series at weight 0 and keeps a constant series constant at any weight", () => {
    expect([...ema([1, 5, 3], 0)]).toEqual([1, 5, 3]);
    for (const v of ema([1e-6, 1e-6, 1e-6, 1e-6], 0.99)) expect(v).toBeCloseTo(1e-6, 18);
  });
  it("keeps gaps as gaps without resetting the average", () => {
    const out = ema([2, NaN_, 4], 0.5);
    expect(Number.isNaN(out[1]!)).toBe(true);
    expect(out[2]).toBeCloseTo(2.5 / 0.75, 12);
  });
  it("clamps the weight to 0.99", () => {
    expect([...ema([0, 100], 5)]).toEqual([...ema([0, 100], 0.99)]);
  });
});

describe("running mean", () => {
  it("averages the trailing window of finite points", () => {
    expect([...runningMean([1, 2, 3, 4, 5], 2)]).toEqual([1, 1.5, 2.5, 3.5, 4.5]);
    expect([...runningMean([3, 6, 9], 10)]).toEqual([3, 4.5, 6]);
    const g = runningMean([1, NaN_, 3, 5], 2);
    expect(Number.isNaN(g[1]!)).toBe(true);
    expect([g[0], g[2], g[3]]).toEqual([1, 2, 4]);
  });
  it("smooth() is null when off", () => {
    expect(smooth([1, 2], { kind: "none" })).toBeNull();
    expect(smooth([1, 2], { kind: "ema", weight: 0 })).toBeNull();
    expect(smooth([1, 2], { kind: "mean", window: 1 })).toBeNull();
    expect([...smooth([1, 3], { kind: "mean", window: 2 })!]).toEqual([1, 2]);
  });
});

describe("URL codec", () => {
  it("round-trips and rejects junk", () => {
    expect(encodeSmoothing({ kind: "ema", weight: 0.6 })).toBe("ema:0.6");
    expect(decodeSmoothing("ema:0.6")).toEqual({ kind: "ema", weight: 0.6 });
    expect(decodeSmoothing("ema:3")).toEqual({ kind: "ema", weight: 0.99 });
    expect(decodeSmoothing("mean:20")).toEqual({ kind: "mean", window: 20 });
    expect(encodeSmoothing({ kind: "mean", window: 20 })).toBe("mean:20");
    expect(decodeSmoothing("mean:1")).toEqual({ kind: "none" });
    expect(decodeSmoothing("bogus")).toEqual({ kind: "none" });
    expect(decodeSmoothing(null)).toEqual({ kind: "none" });
    expect(encodeSmoothing({ kind: "none" })).toBeNull();
  });
});
