/**
 * Preparers for the Metrics view's line charts: API payloads → the core chart model
 * (lib/charts/core/model.ts) with columnar Float64Array series (NaN = gap, never zero),
 * stable colours, the metric's unit and the data signature that decides whether a chart
 * repaints.
 */
import type { EngineSeriesResponse, EngineSeriesItem, MetricPoints } from "@/lib/charts/api-shapes";
import type { XMode } from "@/lib/charts/chart-controls";
import { unitForKey, type ValueUnit } from "@/lib/charts/core/format";
import { chartModel, type ChartModel, type ChartSeries } from "@/lib/charts/core/model";
import { seriesColor, type ThemeName } from "@/lib/charts/palette";

export interface LineModel extends ChartModel {
  key: string;
  unit: ValueUnit;
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

function seriesSignature(s: ChartSeries): string {
  const n = s.x.length;
  if (n === 0) return `${s.id}:0`;
  return `${s.id}:${n}:${s.x[n - 1]}:${s.y[n - 1]}`;
}

function finishModel(key: string, series: ChartSeries[], unit: ValueUnit, xKind: "step" | "time", nonNumeric: number, extentOnly: ChartSeries[] = []): LineModel {
  return { ...chartModel("line", series, { xKind, extentOnly }), key, unit, nonNumeric, signature: series.map(seriesSignature).join("|") };
}

export interface ScalarLineModel extends LineModel {
  /** the step of each point (= x on the step axis): clicks and CSV on a time axis */
  steps: Float64Array;
  /** a time axis was asked for but these points carry no wall time (dump/* aggregates) */
  noTime: boolean;
}

/**
 * A scalar metric: one accent line, x = step, wall time (unix s) or seconds since `t0`
 * (the run start) — docs/charts.md §6.
 */
export function prepareScalarChart(key: string, pts: MetricPoints | undefined, color: string, xMode: XMode = "step", t0 = 0): ScalarLineModel {
  const xs = pts?.x ?? [];
  const ys = pts?.y ?? [];
  if (xMode === "step") {
    const { x, y, nonNumeric } = columns(xs, ys);
    return { ...finishModel(key, [{ id: key, label: key, color, x, y }], unitForKey(key), "step", nonNumeric), steps: x, noTime: false };
  }
  const ts = pts?.ts ?? [];
  const noTime = ys.length > 0 && ts.length < ys.length;
  const tx = noTime ? [] : ts.map((t) => (xMode === "wall" ? t : t - t0));
  const { x, y, nonNumeric } = columns(tx, noTime ? [] : ys);
  const steps = columns(tx, noTime ? [] : xs).y;
  return { ...finishModel(key, [{ id: key, label: key, color, x, y }], unitForKey(key), "time", nonNumeric), steps, noTime };
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
  const series: ChartSeries[] = [];
  const extentOnly: ChartSeries[] = [];
  for (const item of resp?.series ?? []) {
    const label = engineLabel(item);
    const { x, y } = columns(item.ts, item.value);
    const i = order.indexOf(label);
    const s: ChartSeries = { id: label, label: stripScheme(label), color: seriesColor(i < 0 ? order.length : i, theme), x, y };
    if (hidden.has(label)) extentOnly.push(s);
    else series.push(s);
  }
  // x origin includes hidden engines so the axis does not jump when one is hidden
  return finishModel(metric, series, unitForKey(metric), "time", 0, extentOnly);
}

export function engineLabels(resp: EngineSeriesResponse | undefined): string[] {
  return (resp?.series ?? []).map(engineLabel);
}
