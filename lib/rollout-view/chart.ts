/**
 * The chart model behind the rollout scatter and the per-token metric chart, and the
 * pure geometry the canvas needs (docs/views.md 1.9). The canvas component only draws
 * what these functions decide.
 *
 * Differences from the original, on purpose:
 *  - dense lines are reduced to a per-pixel **min/max envelope**, never a mean, so a
 *    single spike in 8k tokens stays visible (docs/views.md 9 #16);
 *  - nulls are gaps (NaN in the columns), never zero;
 *  - zoom is state owned by the parent (and the URL where it matters), not the canvas.
 */

export interface Band {
  x0: number;
  x1: number;
  /** Strong bands (the prompt) are shaded darker than light ones (loss-masked runs). */
  strong: boolean;
  label?: string;
}

export interface ChartModel {
  mode: "line" | "scatter";
  /** x values; ascending in line mode (binary searches rely on it). */
  x: Float64Array;
  /** y values; NaN is a gap / a missing point. */
  y: Float64Array;
  /** Per point: 1 = drawn in the "bad" colour (truncated samples). */
  flag: Uint8Array | null;
  bands: Band[];
  xLabel: string;
  yLabel: string;
  /** Tooltip text of point i (may span lines). */
  tooltip: (i: number) => string;
}

export type Range = readonly [number, number];
export interface Zoom {
  x: Range | null;
  y: Range | null;
}
export const NO_ZOOM: Zoom = { x: null, y: null };

export const MARGIN = { left: 52, right: 14, top: 10, bottom: 24 } as const;
/** Above this many points in the x window a line becomes a min/max envelope. */
export const RAW_POINT_LIMIT = 700;

function widen([lo, hi]: Range, pad: number): Range {
  if (!(hi > lo)) return [lo - 0.5, hi + 0.5];
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

/** Full x extent: the points, widened to include every band. */
export function xExtent(m: ChartModel): Range {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < m.x.length; i++) {
    if (Number.isNaN(m.y[i]!)) continue;
    const v = m.x[i]!;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  for (const b of m.bands) {
    lo = Math.min(lo, b.x0);
    hi = Math.max(hi, b.x1);
  }
  if (!Number.isFinite(lo)) return [0, 1];
  if (!(hi > lo)) return [lo - 0.5, hi + 0.5];
  // Scatter dots have a radius: pad 3% so points at the extremes are not cut in half.
  return m.mode === "scatter" ? widen([lo, hi], 0.03) : [lo, hi];
}

/** y extent of the finite points inside the x window, padded 8% (±0.5 when flat). */
export function yExtent(m: ChartModel, xr: Range): Range {
  let lo = Infinity;
  let hi = -Infinity;
  const [a, b] = visibleIndexRange(m, xr);
  for (let i = a; i < b; i++) {
    const x = m.x[i]!;
    const y = m.y[i]!;
    if (Number.isNaN(y) || x < xr[0] || x > xr[1]) continue;
    if (y < lo) lo = y;
    if (y > hi) hi = y;
  }
  if (!Number.isFinite(lo)) return [0, 1];
  return widen([lo, hi], 0.08);
}

export function viewDomain(m: ChartModel, zoom: Zoom): { x: Range; y: Range } {
  const x = zoom.x ?? xExtent(m);
  return { x, y: zoom.y ?? yExtent(m, x) };
}

/** First index with x ≥ v in an ascending column. */
export function lowerBound(xs: Float64Array, v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** [a, b) of the points whose x can fall in the window (all points in scatter mode). */
export function visibleIndexRange(m: ChartModel, xr: Range): [number, number] {
  if (m.mode !== "line") return [0, m.x.length];
  return [lowerBound(m.x, xr[0]), upperBound(m.x, xr[1])];
}

/** First index with x > v in an ascending column. */
export function upperBound(xs: Float64Array, v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `1/2/5 × 10^k` step giving about `target` intervals over the span. */
export function niceStep(span: number, target: number): number {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / Math.max(1, target);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

export function niceTicks([lo, hi]: Range, target: number): number[] {
  const step = niceStep(hi - lo, target);
  const out: number[] = [];
  const first = Math.ceil(lo / step - 1e-9);
  for (let k = first; k * step <= hi + step * 1e-9 && out.length < 1000; k++) {
    const v = k * step;
    out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  }
  return out;
}

/** One pixel column of a dense line: the extremes keep spikes visible. */
export interface EnvelopeColumn {
  /** First and last point index in the column. */
  i0: number;
  i1: number;
  min: number;
  max: number;
  first: number;
  last: number;
  /** A gap (null) separates this column from the previous one. */
  gapBefore: boolean;
}

/**
 * Min/max envelope of the finite points inside the x window, one column per pixel.
 * Returns null when few enough points are visible to draw them raw.
 */
export function envelope(m: ChartModel, xr: Range, widthPx: number): EnvelopeColumn[] | null {
  const [a, b] = visibleIndexRange(m, xr);
  if (m.mode !== "line" || b - a <= RAW_POINT_LIMIT) return null;
  const cols: EnvelopeColumn[] = [];
  const span = xr[1] - xr[0] || 1;
  const w = Math.max(1, Math.floor(widthPx));
  let cur: EnvelopeColumn | null = null;
  let curPx = -1;
  let gap = false;
  for (let i = a; i < b; i++) {
    const y = m.y[i]!;
    if (Number.isNaN(y)) {
      if (cur) cols.push(cur);
      cur = null;
      gap = true;
      continue;
    }
    const px = Math.min(w - 1, Math.floor(((m.x[i]! - xr[0]) / span) * w));
    if (cur && px === curPx) {
      cur.i1 = i;
      if (y < cur.min) cur.min = y;
      if (y > cur.max) cur.max = y;
      cur.last = y;
      continue;
    }
    if (cur) cols.push(cur);
    cur = { i0: i, i1: i, min: y, max: y, first: y, last: y, gapBefore: gap && cols.length > 0 };
    curPx = px;
    gap = false;
  }
  if (cur) cols.push(cur);
  return cols;
}

/** Line mode: index of the finite point nearest to x (by x), or -1. */
export function nearestByX(m: ChartModel, x: number): number {
  const n = m.x.length;
  if (!n) return -1;
  const i = lowerBound(m.x, x);
  let best = -1;
  let bestD = Infinity;
  // Walk outwards past gaps; bounded so a long null run cannot make hover linear.
  for (let k = 0; k < 64; k++) {
    for (const j of [i - 1 - k, i + k]) {
      if (j < 0 || j >= n || Number.isNaN(m.y[j]!)) continue;
      const d = Math.abs(m.x[j]! - x);
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
    if (best >= 0 && k > 1) break;
  }
  return best;
}

/** Scatter mode: index of the point nearest in pixels, within `maxPx`, or -1. */
export function nearestInPixels(m: ChartModel, sx: (x: number) => number, sy: (y: number) => number, px: number, py: number, maxPx: number): number {
  let best = -1;
  let bestD = maxPx * maxPx;
  for (let i = 0; i < m.x.length; i++) {
    const y = m.y[i]!;
    if (Number.isNaN(y)) continue;
    const dx = sx(m.x[i]!) - px;
    const dy = sy(y) - py;
    const d = dx * dx + dy * dy;
    if (d <= bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

export interface DragBox {
  /** Pixel positions relative to the plot box, already clamped to it. */
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export type DragResult = { kind: "click" } | { kind: "zoom"; zoom: Zoom };

/**
 * What a released drag means (docs/views.md 1.9): under 4px both ways is a click; otherwise
 * each axis zooms only when it moved ≥ 10px, and a wide-but-flat sweep re-fits y.
 */
export function resolveDrag(box: DragBox, prev: Zoom, invX: (px: number) => number, invY: (py: number) => number): DragResult {
  const dx = Math.abs(box.x1 - box.x0);
  const dy = Math.abs(box.y1 - box.y0);
  if (dx < 4 && dy < 4) return { kind: "click" };
  const xs = [invX(box.x0), invX(box.x1)].sort((a, b) => a - b) as [number, number];
  const ys = [invY(box.y0), invY(box.y1)].sort((a, b) => a - b) as [number, number];
  const x = dx >= 10 ? xs : prev.x;
  let y: Range | null;
  if (dy >= 10) y = ys;
  else if (dx >= 10) y = null;
  else y = prev.y;
  return { kind: "zoom", zoom: { x, y } };
}

/** A deterministic jitter in [-1, 1] per id, so stacked binary rewards spread out. */
export function jitterUnit(id: number): number {
  let h = (id | 0) ^ 0x9e3779b9;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return ((h >>> 0) / 0xffffffff) * 2 - 1;
}
