import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import { linspace, minMaxIndices, strideIndices } from "@/lib/timeline/downsample";
import { pyFixed, pyG, pyRepr, pyRound } from "@/lib/timeline/pyformat";
import { checkMaxPoints, checkTopK, checkWindow, checkXBuckets } from "@/lib/timeline/window";

const msg = (f: () => void): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).message;
  }
  throw new Error("did not throw");
};

describe("Python number formatting", () => {
  it("%g", () => {
    expect(pyG(100)).toBe("100");
    expect(pyG(0.7)).toBe("0.7");
    expect(pyG(989.0)).toBe("989");
    expect(pyG(8)).toBe("8");
    expect(pyG(1234567)).toBe("1.23457e+06");
    expect(pyG(0.0001)).toBe("0.0001");
    expect(pyG(0.00001234)).toBe("1.234e-05");
    expect(pyG(999999.5)).toBe("1e+06");
    expect(pyG(0)).toBe("0");
    expect(pyG(-2.5)).toBe("-2.5");
  });
  it("fixed rounds exact ties to even, like Python", () => {
    expect(pyFixed(0.5, 0)).toBe("0");
    expect(pyFixed(1.5, 0)).toBe("2");
    expect(pyFixed(2.5, 0)).toBe("2");
    expect(pyFixed(0.125, 2)).toBe("0.12");
    expect(pyFixed(2.675, 2)).toBe("2.67"); // binary value is below the tie
    expect(pyFixed(5600.4, 0)).toBe("5600");
    expect(pyFixed(-0.5, 0)).toBe("-0");
    expect(pyRound(0.125, 2)).toBe(0.12);
    expect(pyRound(1 / 3, 4)).toBe(0.3333);
  });
  it("repr", () => {
    expect(pyRepr(1000000)).toBe("1000000.0");
    expect(pyRepr(1e16)).toBe("1e+16");
  });
});

describe("request bounds", () => {
  it("window rules with the reference's messages", () => {
    expect(msg(() => checkWindow(10, 10))).toBe("bad window: t1=10.0 <= t0=10.0");
    expect(msg(() => checkWindow(1000000, 1020000))).toBe("window 20000s exceeds max_window_s 14400");
    expect(() => checkWindow(0, 14400)).not.toThrow();
    expect(() => checkWindow(0, undefined)).not.toThrow();
    expect(() => checkWindow(null, 1e12)).not.toThrow();
  });
  it("max_points, x_buckets and top_k", () => {
    expect(msg(() => checkMaxPoints(1))).toBe("max_points=1 must be >= 2");
    expect(msg(() => checkXBuckets(1))).toBe("x_buckets=1 out of range [2, 4000]");
    expect(msg(() => checkXBuckets(4001))).toBe("x_buckets=4001 out of range [2, 4000]");
    expect(msg(() => checkTopK(0))).toBe("top_k=0 out of range [1, 256]");
    expect(msg(() => checkTopK(257))).toBe("top_k=257 out of range [1, 256]");
    expect(() => checkXBuckets(4000)).not.toThrow();
  });
});

describe("downsampling (exact index selection)", () => {
  it("linspace ends exactly at b", () => {
    expect([...linspace(0, 9, 4)]).toEqual([0, 3, 6, 9]);
  });
  it("stride keeps everything up to M and both endpoints beyond", () => {
    expect(strideIndices(5, 5)).toBeNull();
    expect([...strideIndices(10, 4)!]).toEqual([0, 3, 6, 9]);
  });
  it("min/max keeps spikes and dips in order", () => {
    const v = [5, 5, 5, 100, 5, 5, 0, 5, 5, 5, 5, 5];
    const idx = minMaxIndices(v, 4)!;
    expect(idx).toEqual([0, 3, 6, 7]);
    expect(idx.map((i) => v[i])).toContain(100);
    expect(idx.map((i) => v[i])).toContain(0);
    expect(minMaxIndices(v, 12)).toBeNull();
  });
});
