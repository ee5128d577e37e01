import { describe, expect, it } from "vitest";
import { formatDuration, formatElapsed, formatTick, formatTickUnit, formatValue, formatValueUnit, unitForKey } from "@/lib/charts/core/format";

describe("formatValue", () => {
  it("prints missing as a dash, never 0", () => {
    expect(formatValue(null)).toBe("—");
    expect(formatValue(undefined)).toBe("—");
    expect(formatValue(Number.NaN)).toBe("—");
  });
  it("keeps integers, fixes 3 decimals, goes exponential for tiny and huge", () => {
    expect(formatValue(42)).toBe("42");
    expect(formatValue(0.45)).toBe("0.450");
    expect(formatValue(123456.7)).toBe("1.23e+5");
    expect(formatValue(0.0001234)).toBe("1.23e-4");
    expect(formatValue(true)).toBe("✓");
    expect(formatValue("x")).toBe("x");
  });
  it("prints false as nothing (a check column) and rounds negatives", () => {
    expect(formatValue(false)).toBe("");
    expect(formatValue(-1.23456)).toBe("-1.235");
  });
});

describe("formatTick", () => {
  it("follows the axis rules", () => {
    expect(formatTick(0)).toBe("0");
    expect(formatTick(250.4)).toBe("250");
    expect(formatTick(1.234)).toBe("1.23");
    expect(formatTick(0.4567)).toBe("0.457");
    expect(formatTick(2e6)).toBe("2.0e+6");
    expect(formatTick(2e5)).toBe("2.0e+5");
    expect(formatTick(0.1234)).toBe("0.123");
  });
});

describe("units", () => {
  it("derives units from metric names", () => {
    expect(unitForKey("perf/wait_time_ratio")).toBe("fraction");
    expect(unitForKey("perf/actor_train_mfu")).toBe("fraction");
    expect(unitForKey("perf/mfu_peak_tflops")).toBe("plain");
    expect(unitForKey("perf/step_time")).toBe("seconds");
    expect(unitForKey("sglang_token_usage")).toBe("fraction");
    expect(unitForKey("rollout/rewards_mean")).toBe("plain");
  });
  it("prints fractions as percentages and seconds with a unit", () => {
    expect(formatTickUnit(0.4, "fraction")).toBe("40%");
    expect([0.195, 0.2, 0.205].map((v) => formatTickUnit(v, "seconds", 0.005))).toEqual(["0.195s", "0.200s", "0.205s"]);
    expect(formatTickUnit(0.25, "fraction", 0.05)).toBe("25%");
    expect(formatTickUnit(800, "plain", 200)).toBe("800");
    expect(formatTickUnit(2e6, "plain", 5e5)).toBe("2.0e+6");
    expect(formatValueUnit(0.38, "fraction")).toBe("38.0%");
    expect(formatValueUnit(95, "seconds")).toBe("95 s");
    expect(formatValueUnit(null, "plain")).toBe("—");
  });
});

describe("time formats", () => {
  it("formats elapsed time like the original", () => {
    expect(formatElapsed(0)).toBe("+0:00");
    expect(formatElapsed(65)).toBe("+1:05");
    expect(formatElapsed(75.4)).toBe("+1:15");
    expect(formatElapsed(3725)).toBe("+1:02:05");
    expect(formatElapsed(90061)).toBe("+1d 01:01:01");
  });
  it("formats durations for humans", () => {
    expect(formatDuration(0.25)).toBe("250 ms");
    expect(formatDuration(95)).toBe("1m 35s");
    expect(formatDuration(7380)).toBe("2h 03m");
  });
});

describe("formatExact", () => {
  it("prints a constant the way a person writes it", async () => {
    const { formatExact } = await import("@/lib/charts/core/format");
    expect(formatExact(1e-6)).toBe("1e-6");
    expect(formatExact(2.5e-7)).toBe("2.5e-7");
    expect(formatExact(0)).toBe("0");
    expect(formatExact(0.25)).toBe("0.25");
    expect(formatExact(1 / 3)).toBe("0.333333");
    expect(formatExact(3e9)).toBe("3e9");
    expect(formatExact(Number.NaN)).toBe("—");
  });
});
