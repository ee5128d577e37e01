import { describe, expect, it } from "vitest";
import { formatVersions } from "./format";

describe("formatVersions", () => {
  it("shows a span for mixed-version samples and a single version otherwise", () => {
    expect(formatVersions({ weight_version: "1", weight_version_min: 0, mixed_version: true })).toBe("v0–v1");
    expect(formatVersions({ weight_version: "2", weight_version_min: 2, mixed_version: false })).toBe("v2");
    expect(formatVersions({ weight_version: null, weight_version_min: null, mixed_version: null })).toBeNull();
  });
});
