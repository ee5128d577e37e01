/**
 * Viewport arithmetic of the Compute Utilization view (spec §3.9–3.10): the initial
 * window, trailing the newest data in follow mode, wheel zoom around the cursor, drag pan,
 * the fetch range (viewport + margin, never over max_window_s) and the time-axis ticks.
 * All times are unix seconds; a viewport is [v0, v1] inside the data range [T0, T1].
 */

export interface Viewport {
  v0: number;
  v1: number;
}

/** Smallest span zoom-in may reach (the original had none and could zoom to nothing). */
export const MIN_SPAN_S = 2;
export const DEFAULT_MAX_WINDOW_S = 14400;

export function span(v: Viewport): number {
  return v.v1 - v.v0;
}

/** The last `maxWindow` seconds of the data (or all of it when shorter). */
export function latestViewport(T0: number, T1: number, maxWindow = DEFAULT_MAX_WINDOW_S): Viewport {
  const s = Math.min(maxWindow, T1 - T0 || 1);
  return { v0: T1 - s, v1: T1 };
}

/** Whether the viewport's right edge sits on the newest data (it then trails new data). */
export function isPinned(v: Viewport, T1: number): boolean {
  return Math.abs(v.v1 - T1) < 1e-6 || v.v1 > T1;
}

/** Keep a viewport inside [T0, T1] with its span (span capped to the window and data). */
export function clampViewport(v: Viewport, T0: number, T1: number, maxWindow = DEFAULT_MAX_WINDOW_S): Viewport {
  const full = Math.max(T1 - T0, MIN_SPAN_S);
  let s = Math.min(Math.max(span(v), Math.min(MIN_SPAN_S, full)), maxWindow, full);
  if (!(s > 0)) s = Math.min(1, full);
  let v0 = v.v0;
  if (v0 < T0) v0 = T0;
  if (v0 + s > T1) v0 = T1 - s;
  if (v0 < T0) v0 = T0;
  return { v0, v1: v0 + s };
}

/** New data range: a pinned viewport slides to the new T1 keeping its span. */
export function followViewport(v: Viewport, prevT1: number, T0: number, T1: number, maxWindow = DEFAULT_MAX_WINDOW_S): Viewport {
  if (!isPinned(v, prevT1)) return clampViewport(v, T0, T1, maxWindow);
  const s = Math.max(span(v), 1);
  return clampViewport({ v0: T1 - s, v1: T1 }, T0, T1, maxWindow);
}

/** Zoom by `factor` (>1 = out) around time `pivot`, clamped to the data and the window. */
export function zoomAround(v: Viewport, pivot: number, factor: number, T0: number, T1: number, maxWindow = DEFAULT_MAX_WINDOW_S): Viewport {
  const s = span(v);
  const full = Math.max(T1 - T0, MIN_SPAN_S);
  const target = Math.min(Math.max(s * factor, Math.min(MIN_SPAN_S, full)), maxWindow, full);
  const k = s > 0 ? (pivot - v.v0) / s : 0.5;
  let v0 = pivot - k * target;
  let v1 = v0 + target;
  if (v0 < T0) {
    v0 = T0;
    v1 = T0 + target;
  }
  if (v1 > T1) {
    v1 = T1;
    v0 = T1 - target;
  }
  return { v0: Math.max(v0, T0), v1 };
}

/** Wheel: factor = exp(deltaY · 0.002) as in the original. */
export function wheelFactor(deltaY: number): number {
  return Math.exp(deltaY * 0.002);
}

/** Pan by `dt` seconds (positive = later), span kept, clamped to [T0, T1]. */
export function panBy(v: Viewport, dt: number, T0: number, T1: number): Viewport {
  const s = span(v);
  let v0 = v.v0 + dt;
  if (v0 + s > T1) v0 = T1 - s;
  if (v0 < T0) v0 = T0;
  return { v0, v1: v0 + s };
}

/** Data to fetch for a viewport: a margin of min(span/4, (max − span)/2) each side. */
export function fetchWindow(v: Viewport, T0: number, T1: number, maxWindow = DEFAULT_MAX_WINDOW_S): Viewport {
  const s = span(v);
  const margin = Math.max(0, Math.min(s / 4, (maxWindow - s) / 2));
  return { v0: Math.max(T0, v.v0 - margin), v1: Math.min(T1, v.v1 + margin) };
}

/** Whether fetched data covers the viewport (a little slack for float noise). */
export function covers(fetched: Viewport | null, v: Viewport): boolean {
  if (!fetched) return false;
  return fetched.v0 <= v.v0 + 1e-6 && fetched.v1 >= v.v1 - 1e-6;
}

const TICK_STEPS = [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** Tick step: the first of the list giving ≤ 10 ticks, else 7200 s (or wider for long windows). */
export function tickStep(s: number, maxTicks = 10): number {
  for (const step of TICK_STEPS) if (s / step <= maxTicks) return step;
  let step = 7200;
  while (s / step > maxTicks) step *= 2;
  return step;
}

/** Tick times aligned to multiples of the step counted from T0. */
export function timeTicks(v: Viewport, T0: number, maxTicks = 10): number[] {
  return ticksWithStep(v, T0, tickStep(span(v), maxTicks));
}

/** Ticks of a given step over a range (a pre-rendered strip wider than the view uses the view's step). */
export function ticksWithStep(v: Viewport, T0: number, step: number): number[] {
  const first = T0 + Math.ceil((v.v0 - T0) / step - 1e-9) * step;
  const out: number[] = [];
  for (let t = first; t <= v.v1 + 1e-9 && out.length < 200; t += step) out.push(t);
  return out;
}

/** Viewport that shows one step: [max(ts − step_time, ts − max), ts], padded 3% each side. */
export function stepViewport(ts: number, stepTime: number, T0: number, T1: number, maxWindow = DEFAULT_MAX_WINDOW_S): Viewport {
  const v0 = Math.max(ts - stepTime, ts - maxWindow);
  const pad = (ts - v0) * 0.03;
  return clampViewport({ v0: v0 - pad, v1: ts + pad }, T0, T1, maxWindow);
}
