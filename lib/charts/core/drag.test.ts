import { describe, expect, it } from "vitest";
import { dragOverlay, resolveRelease } from "@/lib/charts/core/drag";
import { NO_ZOOM, type Zoom } from "@/lib/charts/core/range";

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

describe("resolveRelease (the rollout charts' cases)", () => {
  const id = (p: number) => p;
  it("treats a tiny move as a click", () => {
    expect(resolveRelease([10, 10], [12, 13], NO_ZOOM, id, id)).toEqual({ kind: "click", px: 12, py: 13 });
  });
  it("a horizontal sweep right-to-left zooms x and re-fits y", () => {
    expect(resolveRelease([50, 10], [20, 14], { x: null, y: [0, 1] }, id, id)).toEqual({ kind: "zoom", zoom: { x: [20, 50], y: null } });
  });
  it("a box zooms both axes; a vertical sweep keeps the x zoom", () => {
    expect(resolveRelease([0, 0], [30, 30], NO_ZOOM, id, id)).toEqual({ kind: "zoom", zoom: { x: [0, 30], y: [0, 30] } });
    expect(resolveRelease([5, 0], [8, 40], { x: [1, 2], y: null }, id, id)).toEqual({ kind: "zoom", zoom: { x: [1, 2], y: [0, 40] } });
  });
});

describe("dragOverlay", () => {
  const box = { left: 0, top: 10, width: 100, height: 80 };
  it("is a full-height band below 10 px of vertical extent, a box above", () => {
    expect(dragOverlay([10, 40], [50, 45], box)).toEqual({ x: 10, y: 10, w: 40, h: 80 });
    expect(dragOverlay([10, 40], [50, 60], box)).toEqual({ x: 10, y: 40, w: 40, h: 20 });
  });
});
