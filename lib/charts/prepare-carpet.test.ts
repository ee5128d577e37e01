import { describe, expect, it } from "vitest";
import type { HeatmapHeader } from "@/lib/charts/api-shapes";
import { golden } from "@/lib/testing/golden";
import { bucketAt, carpetLut, carpetScaleText, cellText, prepareCarpet, rowHeightFor, rowIdentity } from "@/lib/charts/prepare-carpet";

const lane = (index: number, node: string, roles: string[]) => ({ node, gpu: index % 4, index, roles });

describe("carpet geometry", () => {
  it("shrinks rows as they grow", () => {
    expect([rowHeightFor(4), rowHeightFor(16), rowHeightFor(17), rowHeightFor(64), rowHeightFor(200), rowHeightFor(1000)]).toEqual([14, 14, 8, 8, 4, 2]);
  });
  it("separates nodes (solid) and role changes (dashed)", () => {
    const header: HeatmapHeader = {
      rows: [lane(0, "a", ["train"]), lane(1, "a", ["rollout"]), lane(2, "b", ["rollout"])],
      x_buckets: 2,
      t0: 0,
      t1: 10,
      metric: "util",
      scale: { max: 100 },
      palette: null,
    };
    const m = prepareCarpet(header, new Uint8Array([0, 255, 128, 0, 1, 2]), "light");
    expect(m.separators).toEqual([
      { row: 1, kind: "role" },
      { row: 2, kind: "node" },
    ]);
    expect(m.height).toBe(42);
    expect(m.rgba[3]).toBe(0); // empty cell stays transparent
    expect(Array.from(m.rgba.subarray(4, 8))).toEqual([11, 93, 71, 255]);
    expect(cellText(m, 0, 1)).toBe("util: 100");
    expect(cellText(m, 0, 0)).toBe("util: no data (or 0)");
    expect(carpetScaleText(m)).toBe("0–100%");
    expect(bucketAt(m, 7)).toBe(1);
    expect(bucketAt(m, 11)).toBe(-1);
    expect(rowIdentity(header.rows[0]!)).toBe("g0 a:0 (train)");
  });
  it("colours phases by name with the carpet's wake_up", () => {
    const lut = carpetLut({ metric: "phase", palette: ["", "rollout", "wake_up", "mystery"] }, "light");
    expect(Array.from(lut.subarray(4, 8))).toEqual([0xd5, 0x58, 0x16, 255]);
    expect(Array.from(lut.subarray(8, 12))).toEqual([0x18, 0x64, 0xab, 255]);
    expect(Array.from(lut.subarray(12, 16))).toEqual([0x9c, 0x94, 0x88, 255]);
  });
});

describe("carpet on the fixture run", () => {
  it("decodes the phase carpet", () => {
    const body = golden<{ header: HeatmapHeader; matrix: number[] }>("/api/timeline/heatmap?metric=phase&t0=1000000.0&t1=1000329.0&x_buckets=100");
    const m = prepareCarpet(body.header, Uint8Array.from(body.matrix), "dark");
    expect(m.rows).toBe(4);
    expect(m.kind).toBe("phase");
    expect(cellText(m, 0, 0)).toBe("phase: initialize");
    expect(cellText(m, 0, 10)).toBe("phase: rollout");
  });
});
