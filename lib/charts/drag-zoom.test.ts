import { describe, expect, it } from "vitest";
import { decodeRange, dragOverlay, encodeRange, NO_ZOOM, resolveRelease, type Zoom } from "@/lib/charts/drag-zoom";

const inv = (px: number) => px; // identity mapping for readability
const invY = (py: number) => 100 - py;

describe("resolveRelease", () => {
  it("treats a press that moves under 4 px as a click", () => {
    expect(resolveRelease([50, 50], [53, 52], NO_ZOOM, inv, invY)).toEqual({ kind: "click", px: 53, py: 52 });
  });
  it("zooms x only and re-fits y on a horizontal sweep", () => {
    const prev: Zoom = { x: null, y: [1, 2] };
    expect(resolveRelease([10, 50], [60, 55], prev, inv, invY)).toEqual({ kind: "zoom", zoom: { x: [10, 60], y: null } });
  });
  it("zooms both axes on a box", () => {
    expect(resolveRelease([60, 20], [10, 70], NO_ZOOM, inv, invY)).toEqual({ kind: "zoom", zoom: { x: [10, 60], y: [30, 80] } });
  });
  it("zooms y only on a vertical sweep and keeps the x zoom", () => {
    const prev: Zoom = { x: [0, 5], y: null };
    expect(resolveRelease([30, 10], [35, 60], prev, inv, invY)).toEqual({ kind: "zoom", zoom: { x: [0, 5], y: [40, 90] } });
  });
  it("ignores a small wobble between 4 and 10 px", () => {
    expect(resolveRelease([30, 30], [36, 36], NO_ZOOM, inv, invY)).toEqual({ kind: "none" });
  });
});

describe("dragOverlay", () => {
  const box = { left: 0, top: 10, width: 100, height: 80 };
  it("is a full-height band below 10 px of vertical extent, a box above", () => {
    expect(dragOverlay([10, 40], [50, 45], box)).toEqual({ x: 10, y: 10, w: 40, h: 80 });
    expect(dragOverlay([10, 40], [50, 60], box)).toEqual({ x: 10, y: 40, w: 40, h: 20 });
  });
});

describe("range codec", () => {
  it("round-trips and keeps unix seconds to 0.01 s", () => {
    expect(decodeRange(encodeRange([1712345678.25, 1712349999.75]))).toEqual([1712345678.25, 1712349999.75]);
    expect(decodeRange("3~1")).toEqual([1, 3]);
    expect(decodeRange("bad")).toBeNull();
    expect(decodeRange("2~2")).toBeNull();
  });
});
