import { describe, expect, it } from "vitest";
import { formatCell, formatElapsed, formatTick, formatVersions } from "./format";

describe("formatCell", () => {
  it("renders absent as a dash, booleans as a check or nothing, integers as is", () => {
    expect(formatCell(null)).toBe("—");
    expect(formatCell(undefined)).toBe("—");
    expect(formatCell(true)).toBe("✓");
    expect(formatCell(false)).toBe("");
    expect(formatCell(42)).toBe("42");
    expect(formatCell("completed")).toBe("completed");
  });
  it("uses 3 decimals in the readable range and exponent outside it", () => {
    expect(formatCell(0.5)).toBe("0.500");
    expect(formatCell(-1.23456)).toBe("-1.235");
    expect(formatCell(123456.7)).toBe("1.23e+5");
    expect(formatCell(0.0001234)).toBe("1.23e-4");
  });
});

describe("formatTick", () => {
  it("follows the axis rules", () => {
    expect(formatTick(0)).toBe("0");
    expect(formatTick(250.4)).toBe("250");
    expect(formatTick(1.234)).toBe("1.23");
    expect(formatTick(0.1234)).toBe("0.123");
    expect(formatTick(2e5)).toBe("2.0e+5");
  });
});

describe("formatElapsed", () => {
  it("uses +m:ss below an hour, +h:mm:ss below a day, then days", () => {
    expect(formatElapsed(0)).toBe("+0:00");
    expect(formatElapsed(75.4)).toBe("+1:15");
    expect(formatElapsed(3725)).toBe("+1:02:05");
    expect(formatElapsed(90061)).toBe("+1d 01:01:01");
  });
});

describe("formatVersions", () => {
  it("shows a span for mixed-version samples and a single version otherwise", () => {
    expect(formatVersions({ weight_version: "1", weight_version_min: 0, mixed_version: true })).toBe("v0–v1");
    expect(formatVersions({ weight_version: "2", weight_version_min: 2, mixed_version: false })).toBe("v2");
    expect(formatVersions({ weight_version: null, weight_version_min: null, mixed_version: null })).toBeNull();
  });
});
