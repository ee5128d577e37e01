import { describe, expect, it } from "vitest";
import { lowerBound, upperBound } from "@/lib/bisect";

/** The linear-scan answers the searches must equal. */
const firstAtLeast = (xs: ArrayLike<number>, v: number, lo: number, hi: number) => {
  for (let i = lo; i < hi; i++) if (xs[i]! >= v) return i;
  return hi;
};
const firstAbove = (xs: ArrayLike<number>, v: number, lo: number, hi: number) => {
  for (let i = lo; i < hi; i++) if (xs[i]! > v) return i;
  return hi;
};

describe("lowerBound / upperBound", () => {
  it("equal a linear scan on random ascending runs with repeats, in every sub-range, for plain and typed arrays", () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 60; trial++) {
      const n = Math.floor(rand() * 40);
      const plain: number[] = [];
      let x = rand() * 10 - 5;
      for (let i = 0; i < n; i++) plain.push((x += rand() < 0.3 ? 0 : Math.round(rand() * 4) / 2));
      for (const xs of [plain, Float64Array.from(plain), Uint32Array.from(plain.map((v) => Math.max(0, Math.round(v + 10))))]) {
        const probes = [-Infinity, Infinity, ...Array.from(xs), ...Array.from(xs, (v) => v + 0.25), ...Array.from(xs, (v) => v - 0.25)];
        for (let k = 0; k < 8; k++) {
          const lo = Math.floor(rand() * (n + 1));
          const hi = lo + Math.floor(rand() * (n - lo + 1));
          for (const v of probes) {
            expect(lowerBound(xs, v, lo, hi)).toBe(firstAtLeast(xs, v, lo, hi));
            expect(upperBound(xs, v, lo, hi)).toBe(firstAbove(xs, v, lo, hi));
          }
        }
        for (const v of probes) {
          expect(lowerBound(xs, v)).toBe(firstAtLeast(xs, v, 0, xs.length));
          expect(upperBound(xs, v)).toBe(firstAbove(xs, v, 0, xs.length));
        }
      }
    }
  });

  it("split a run of repeats at its two ends", () => {
    const xs = [1, 2, 2, 2, 3];
    expect(lowerBound(xs, 2)).toBe(1);
    expect(upperBound(xs, 2)).toBe(4);
    expect(lowerBound([], 1)).toBe(0);
    expect(upperBound([], 1)).toBe(0);
  });
});
