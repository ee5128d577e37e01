/**
 * The compare overlay's chart model (README "Comparing runs"): one metric, one series per
 * run in the run's colour, x = step or wall time since the run's start. Runs that lack
 * the metric (or, on the time axis, its timestamps) are listed instead of dropped.
 */
import { chartModel, type ChartModel, type ChartSeries } from "@/lib/charts/core/model";

export type OverlayX = "step" | "time";

/** A run's series: the JSON answer's arrays, or the typed columns of its binary frame (NaN for null). */
export interface OverlayPoints {
  x: ArrayLike<number | null>;
  y: ArrayLike<unknown>;
  ts: ArrayLike<number>;
}

export interface OverlayRun {
  id: string;
  name: string;
  color: string;
  /** the run's start (meta.json start_ts); null = its first timestamp */
  startTs: number | null;
  /** undefined: the run does not have this metric */
  points: OverlayPoints | undefined;
}

export interface OverlayModel {
  model: ChartModel;
  /** run names without this metric (or without wall times for it, on the time axis) */
  missing: string[];
  /** runs that have it, with their point counts */
  present: { name: string; n: number }[];
}

function num(v: unknown): number {
  if (typeof v === "number") return Number.isFinite(v) ? v : Number.NaN;
  if (typeof v === "boolean") return v ? 1 : 0;
  return Number.NaN;
}

function series(run: OverlayRun, mode: OverlayX): ChartSeries | null {
  const p = run.points;
  if (!p || p.y.length === 0) return null;
  const n = p.y.length;
  if (mode === "time" && p.ts.length < n) return null; // dump/* aggregates carry no wall time
  let t0 = run.startTs;
  if (mode === "time" && t0 === null) {
    t0 = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) if (p.ts[i]! < t0) t0 = p.ts[i]!;
  }
  // one pass into columns sized for every point; points without a finite x are skipped
  let x = new Float64Array(n);
  let y = new Float64Array(n);
  let m = 0;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const xv = mode === "time" ? p.ts[i]! - t0! : p.x[i];
    if (typeof xv !== "number" || !Number.isFinite(xv)) continue;
    if (m > 0 && xv < x[m - 1]!) sorted = false;
    x[m] = xv;
    y[m] = num(p.y[i]);
    m++;
  }
  if (m === 0) return null;
  if (m < n) {
    x = x.slice(0, m);
    y = y.slice(0, m);
  }
  // line mode needs ascending x (a restarted run repeats steps): stable sort when needed
  if (!sorted) {
    const order = Array.from({ length: m }, (_, i) => i);
    const xs = x;
    const ys = y;
    order.sort((a, b) => xs[a]! - xs[b]! || a - b);
    x = new Float64Array(m);
    y = new Float64Array(m);
    order.forEach((src, j) => {
      x[j] = xs[src]!;
      y[j] = ys[src]!;
    });
  }
  return { id: run.id, label: run.name, color: run.color, x, y };
}

export function prepareOverlay(runs: readonly OverlayRun[], mode: OverlayX): OverlayModel {
  const out: ChartSeries[] = [];
  const missing: string[] = [];
  const present: { name: string; n: number }[] = [];
  for (const r of runs) {
    const s = series(r, mode);
    if (s) {
      out.push(s);
      present.push({ name: r.name, n: s.x.length });
    } else missing.push(r.name);
  }
  return { model: chartModel("line", out, { xKind: mode === "time" ? "value" : "step" }), missing, present };
}
