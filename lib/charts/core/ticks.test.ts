import { describe, expect, it } from "vitest";
import { niceTicks, stepTicks, tickStep, ticksFrom } from "@/lib/charts/core/ticks";

describe("ticks", () => {
  it("uses 1/2/5 steps", () => {
    expect(niceTicks([0, 1], 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks([3, 97], 5)).toEqual([20, 40, 60, 80]);
  });
  it("only puts ticks on whole steps", () => {
    expect(stepTicks([0, 2], 8)).toEqual([0, 1, 2]);
    expect(stepTicks([0.2, 0.8], 8)).toEqual([]);
  });
  it("is nice relative to an origin (elapsed time)", () => {
    expect(ticksFrom(1000.5)([1000.5, 1100.5], 5)).toEqual([1000.5, 1020.5, 1040.5, 1060.5, 1080.5, 1100.5]);
  });
  it("reports the spacing, or a fifth of the domain for one tick", () => {
    expect(tickStep([0, 0.5, 1], [0, 1])).toBe(0.5);
    expect(tickStep([1], [0, 10])).toBe(2);
  });
});
