/**
 * Preparers for the Metrics view's line charts: API payloads → one LineModel with
 * columnar Float64Array series (NaN = gap, never zero), stable colours, a unit-aware
 * formatter and the data signature that decides whether a chart repaints.
 */
import { scaleLinear } from "@visx/scale";
import type { EngineSeriesResponse, EngineSeriesItem, MetricPoints } from "@/lib/charts/api-shapes";
import { yExtentInWindow } from "@/lib/charts/decimate";
import { unitForKey, type ValueUnit } from "@/lib/charts/format";
import { seriesColor, type ThemeName } from "@/lib/charts/palette";

export interface XYSeries {
  id: string;
  label: string;
  color: string;
  x: Float64Array;
  y: Float64Array;
}

export interface LineModel {
  key: string;
  series: XYSeries[];
  /** [min x, max x] over every series (hidden ones included, so zoom origins stay put) */
  xExtent: [number, number] | null;
  unit: ValueUnit;
  xKind: "step" | "time";
  /** finite points over all series */
  points: number;
  /** values that were not numbers (strings) and are drawn as gaps */
  nonNumeric: number;
  /** `<count>:<last x>:<last y>` per series; equal signature ⇒ nothing to repaint */
  signature: string;
}

function toNumber(v: unknown): number {
  if (typeof v === "number") return Number.isFinite(v) ? v : Number.NaN;
  if (typeof v === "boolean") return v ? 1 : 0;
  return Number.NaN;
}

/** Sort columns by x (stable) when they are not already ascending; drops null x. */
function columns(xs: readonly (number | null)[], ys: readonly unknown[]): { x: Float64Array; y: Float64Array; nonNumeric: number } {
  const n = Math.min(xs.length, ys.length);
  let sorted = true;
  let prev = Number.NEGATIVE_INFINITY;
  let validX = 0;
  let nonNumeric = 0;
  for (let i = 0; i < n; i++) {
    const xv = xs[i];
    if (typeof xv !== "number" || !Number.isFinite(xv)) continue;
    validX++;
    if (xv < prev) sorted = false;
    prev = xv;
    const yv = ys[i];
    if (yv !== null && yv !== undefined && typeof yv !== "number" && typeof yv !== "boolean") nonNumeric++;
  }
  const idx: number[] = [];
  for (let i = 0; i < n; i++) {
    const xv = xs[i];
    if (typeof xv === "number" && Number.isFinite(xv)) idx.push(i);
  }
  if (!sorted) idx.sort((a, b) => (xs[a] as number) - (xs[b] as number) || a - b);
  const x = new Float64Array(validX);
  const y = new Float64Array(validX);
  idx.forEach((src, j) => {
    x[j] = xs[src] as number;
    y[j] = toNumber(ys[src]);
  });
  return { x, y, nonNumeric };
}

function seriesSignature(s: XYSeries): string {
  const n = s.x.length;
  if (n === 0) return `${s.id}:0`;
  return `${s.id}:${n}:${s.x[n - 1]}:${s.y[n - 1]}`;
}

function finishModel(key: string, series: XYSeries[], unit: ValueUnit, xKind: LineModel["xKind"], nonNumeric: number): LineModel {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let points = 0;
  for (const s of series) {
    if (s.x.length > 0) {
      lo = Math.min(lo, s.x[0]!);
      hi = Math.max(hi, s.x[s.x.length - 1]!);
    }
    for (let i = 0; i < s.y.length; i++) if (Number.isFinite(s.y[i]!)) points++;
  }
  return {
    key,
    series,
    xExtent: lo <= hi ? [lo, hi] : null,
    unit,
    xKind,
    points,
    nonNumeric,
    signature: series.map(seriesSignature).join("|"),
  };
}

/** A scalar metric (one accent line on a step axis). */
export function prepareScalarChart(key: string, pts: MetricPoints | undefined, color: string): LineModel {
  const { x, y, nonNumeric } = columns(pts?.x ?? [], pts?.y ?? []);
  return finishModel(key, [{ id: key, label: key, color, x, y }], unitForKey(key), "step", nonNumeric);
}

/** `addr`, plus ` dpN` in split mode and the PD `engine_type` so series never collide. */
export function engineLabel(item: Pick<EngineSeriesItem, "addr" | "labels">): string {
  const parts = [item.addr];
  const et = item.labels.engine_type;
  if (et !== undefined && et !== null && et !== "") parts.push(String(et));
  const dp = item.labels.dp_rank;
  if (dp !== undefined && dp !== null && dp !== "") parts.push(`dp${String(dp)}`);
  return parts.join(" ");
}

export function stripScheme(label: string): string {
  return label.replace(/^https?:\/\//, "");
}

/** Numeric-aware compare so `dp10` sorts after `dp2` and `10.0.0.10` after `10.0.0.2`. */
export function compareLabels(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

/** Page-wide engine order: union of every label seen, sorted; index → colour. */
export function mergeEngineOrder(current: readonly string[], labels: Iterable<string>): string[] {
  const set = new Set(current);
  let grew = false;
  for (const l of labels) {
    if (!set.has(l)) {
      set.add(l);
      grew = true;
    }
  }
  if (!grew) return current as string[];
  return [...set].sort(compareLabels);
}

/** Engine metric chart: one line per engine (or dp rank); hidden engines are left out of the y-scale. */
export function prepareEngineChart(
  metric: string,
  resp: EngineSeriesResponse | undefined,
  order: readonly string[],
  hidden: ReadonlySet<string>,
  theme: ThemeName,
): LineModel {
  const series: XYSeries[] = [];
  const extentOnly: XYSeries[] = [];
  for (const item of resp?.series ?? []) {
    const label = engineLabel(item);
    const { x, y } = columns(item.ts, item.value);
    const i = order.indexOf(label);
    const s: XYSeries = { id: label, label: stripScheme(label), color: seriesColor(i < 0 ? order.length : i, theme), x, y };
    if (hidden.has(label)) extentOnly.push(s);
    else series.push(s);
  }
  const model = finishModel(metric, series, unitForKey(metric), "time", 0);
  // x origin includes hidden engines so the axis does not jump when one is hidden
  const all = finishModel(metric, [...series, ...extentOnly], model.unit, "time", 0);
  return { ...model, xExtent: all.xExtent };
}

export function engineLabels(resp: EngineSeriesResponse | undefined): string[] {
  return (resp?.series ?? []).map(engineLabel);
}

/**
 * y-domain over the visible window: min..max with 8% padding; a flat series is widened
 * (±0.5, or ±5% of its magnitude for large values) so it sits mid-chart.
 */
export function yDomain(series: readonly XYSeries[], x0: number, x1: number, pad = 0.08): [number, number] | null {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const s of series) {
    const e = yExtentInWindow(s.x, s.y, x0, x1);
    if (!e) continue;
    lo = Math.min(lo, e[0]);
    hi = Math.max(hi, e[1]);
  }
  if (!(lo <= hi)) return null;
  if (hi === lo) {
    const w = Math.abs(lo) > 10 ? Math.abs(lo) * 0.05 : 0.5;
    return [lo - w, hi + w];
  }
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

/** x-domain for a data extent; a single point gets ±0.5 (steps) or ±30 s (time). */
export function xDomain(extent: [number, number] | null, kind: LineModel["xKind"]): [number, number] | null {
  if (!extent) return null;
  if (extent[0] === extent[1]) {
    const w = kind === "time" ? 30 : 0.5;
    return [extent[0] - w, extent[1] + w];
  }
  return extent;
}

/** "Nice" tick values (1/2/5 × 10^k) inside a domain. */
export function niceTicks(domain: [number, number], count: number): number[] {
  return scaleLinear<number>({ domain, range: [0, 1] }).ticks(count);
}

/** Integer-only ticks for step axes (no "0.5" steps). */
export function stepTicks(domain: [number, number], count: number): number[] {
  const t = niceTicks(domain, count).filter((v) => Number.isInteger(v));
  if (t.length > 0) return t;
  const mid = Math.round((domain[0] + domain[1]) / 2);
  return mid >= domain[0] && mid <= domain[1] ? [mid] : [];
}
