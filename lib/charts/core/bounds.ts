/**
 * Auto domains of every chart: x from the model's extent, y from the finite points inside
 * the visible x window (docs/views.md 1.9: y re-fits to what is shown).
 */
import { yExtentInWindow } from "@/lib/charts/core/envelope";
import type { ChartModel } from "@/lib/charts/core/model";
import type { Range, Zoom } from "@/lib/charts/core/range";

/** x domain of a model; a single point gets ±0.5 (±30 s on a time axis), scatter dots 3 % room. */
export function xDomain(m: Pick<ChartModel, "xExtent" | "xKind" | "mode">): Range | null {
  const e = m.xExtent;
  if (!e) return null;
  if (e[0] === e[1]) {
    const w = m.xKind === "time" ? 30 : 0.5;
    return [e[0] - w, e[1] + w];
  }
  // Scatter dots have a radius: pad 3 % so points at the extremes are not cut in half.
  if (m.mode === "scatter") {
    const p = (e[1] - e[0]) * 0.03;
    return [e[0] - p, e[1] + p];
  }
  return e;
}

/**
 * y domain over the visible window: min..max with 8 % padding; a flat series (to 1e-9
 * relative) is widened (±0.5, or ±5 % of its magnitude for large values) so it sits
 * mid-chart. Null when no
 * finite point is in the window.
 */
export function yDomain(m: Pick<ChartModel, "series" | "mode">, x: Range, pad = 0.08): Range | null {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const s of m.series) {
    const e = yExtentInWindow(s.x, s.y, x[0], x[1], m.mode === "line");
    if (!e) continue;
    lo = Math.min(lo, e[0]);
    hi = Math.max(hi, e[1]);
  }
  if (!(lo <= hi)) return null;
  // Flat, or flat but for float noise (0.2 vs 0.20000000000000004): ticks 1e-17 apart
  // would all print the same label.
  if (hi - lo <= Math.max(Math.abs(lo), Math.abs(hi)) * 1e-9) {
    const w = Math.abs(lo) > 10 ? Math.abs(lo) * 0.05 : 0.5;
    return [lo - w, hi + w];
  }
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

export interface ViewDomain {
  x: Range;
  y: Range;
  /** false when no finite point lies in the x window (the chart says so) */
  inWindow: boolean;
}

/** What a chart shows: the zoom where set, else the auto domains ([0, 1] when empty). */
export function viewDomain(m: ChartModel, zoom: Zoom): ViewDomain {
  const x = zoom.x ?? xDomain(m) ?? [0, 1];
  const auto = yDomain(m, x);
  return { x, y: zoom.y ?? auto ?? [0, 1], inWindow: auto !== null };
}
