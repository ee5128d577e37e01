/**
 * Log-scale y (docs/charts.md §6). The chart works in log10 space: a model's y columns are
 * mapped to log10(y), non-positive values become gaps and are counted (the chart says how
 * many are hidden), ticks sit on powers of ten (with 2 and 5 between them when the range
 * spans less than three decades) and are labelled with the value, not its logarithm.
 */
import type { ChartModel } from "@/lib/charts/core/model";
import type { Range } from "@/lib/charts/core/range";

export interface LogModel<M extends ChartModel> {
  model: M;
  /** finite values ≤ 0 that a log axis cannot show */
  hidden: number;
}

export function logColumn(y: ArrayLike<number>): { y: Float64Array; hidden: number } {
  const out = new Float64Array(y.length);
  let hidden = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i]!;
    if (v > 0) out[i] = Math.log10(v);
    else {
      out[i] = Number.NaN;
      if (Number.isFinite(v)) hidden++;
    }
  }
  return { y: out, hidden };
}

/** The model with every series' y in log10 space (x, flags and extent unchanged). */
export function toLogModel<M extends ChartModel>(m: M): LogModel<M> {
  let hidden = 0;
  let points = 0;
  const series = m.series.map((s) => {
    const c = logColumn(s.y);
    hidden += c.hidden;
    for (let i = 0; i < c.y.length; i++) if (Number.isFinite(c.y[i]!)) points++;
    return { ...s, y: c.y };
  });
  return { model: { ...m, series, points }, hidden };
}

/** Tick positions (log10 units) inside a log10 domain. */
export function logTicks(domain: Range, count = 5): number[] {
  const [lo, hi] = domain;
  if (!(hi > lo) || !Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  const e0 = Math.floor(lo);
  const e1 = Math.ceil(hi);
  const decades = e1 - e0;
  const out: number[] = [];
  if (hi - lo <= 3) {
    for (let e = e0; e <= e1; e++) for (const m of [1, 2, 5]) {
      const t = e + Math.log10(m);
      if (t >= lo - 1e-12 && t <= hi + 1e-12) out.push(t);
    }
    if (out.length >= 2) return out;
    // less than one 1-2-5 step in view: linear ticks of the value, in log units
    const a = Math.pow(10, lo);
    const b = Math.pow(10, hi);
    const step = niceStep((b - a) / count);
    const res: number[] = [];
    for (let v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) if (v > 0) res.push(Math.log10(v));
    return res;
  }
  const every = Math.max(1, Math.ceil(decades / count));
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) if ((e - e0) % every === 0) out.push(e);
  return out;
}

function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/** The value at a log10 position, rounded so 10^log10(0.2) prints 0.2, not 0.19999999999999998. */
export function fromLog(v: number): number {
  return Number(Math.pow(10, v).toPrecision(12));
}
