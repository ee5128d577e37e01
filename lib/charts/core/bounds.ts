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
 * relative) is widened so it sits mid-chart: ±5 % of its magnitude above 10, ±0.5 from
 * 0.01 (and for 0), ±50 % of a smaller magnitude (a constant learning rate of 1e-6 is
 * centred, not drawn on the 0 gridline; issue #15 defect 8). Null when no finite point
 * is in the window.
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
    return flatDomain(lo, hi);
  }
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

/** The widened domain of a flat series at lo ≈ hi. */
export function flatDomain(lo: number, hi = lo): Range {
  const a = Math.max(Math.abs(lo), Math.abs(hi));
  const w = a > 10 ? a * 0.05 : a >= 0.01 || a === 0 ? 0.5 : a * 0.5;
  return [lo - w, hi + w];
}

/**
 * The one value of a constant chart: every finite point of every series equal (to 1e-9
 * relative), over the whole model — the chart then says "constant v over the run" and
 * draws one gridline at v. Null when the values vary or there is no point.
 */
export function constantValue(m: Pick<ChartModel, "series">): number | null {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const s of m.series) {
    for (let i = 0; i < s.y.length; i++) {
      const v = s.y[i]!;
      if (!Number.isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (!(lo <= hi)) return null;
  return hi - lo <= Math.max(Math.abs(lo), Math.abs(hi)) * 1e-9 ? lo : null;
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
