/**
 * Fleet overview preparer (> 64 lanes): phase composition stacks and the util band
 * (p10–p90, median, min) as Float64Array columns; null buckets stay NaN (no sample is
 * not 0 %).
 */
import type { FleetResponse } from "@/lib/charts/api-shapes";

export interface FleetModel {
  t0: number;
  t1: number;
  xBuckets: number;
  lanes: number;
  /** phase names in palette order (without "none") */
  phases: string[];
  /** cumulative tops per phase: stack[k][b] = sum of fractions of phases 0..k at bucket b */
  stack: Float64Array[];
  p10: Float64Array;
  p50: Float64Array;
  p90: Float64Array;
  min: Float64Array;
  hasPhases: boolean;
  hasBand: boolean;
}

function col(xs: readonly (number | null)[] | undefined, n: number): Float64Array {
  const out = new Float64Array(n).fill(Number.NaN);
  if (!xs) return out;
  for (let i = 0; i < n && i < xs.length; i++) {
    const v = xs[i];
    if (typeof v === "number") out[i] = v;
  }
  return out;
}

export function prepareFleet(f: FleetResponse): FleetModel {
  const X = f.x_buckets;
  const phases = f.palette.filter((p) => p !== "" && p !== "none" && f.composition[p] !== undefined);
  const stack: Float64Array[] = [];
  let acc = new Float64Array(X);
  for (const p of phases) {
    const c = f.composition[p]!;
    const next = new Float64Array(X);
    for (let b = 0; b < X; b++) next[b] = acc[b]! + (c[b] ?? 0);
    stack.push(next);
    acc = next;
  }
  const p50 = col(f.band.p50, X);
  return {
    t0: f.t0,
    t1: f.t1,
    xBuckets: X,
    lanes: f.lanes,
    phases,
    stack,
    p10: col(f.band.p10, X),
    p50,
    p90: col(f.band.p90, X),
    min: col(f.band.min, X),
    hasPhases: phases.length > 0,
    hasBand: p50.some((v) => !Number.isNaN(v)),
  };
}

/** Phase fractions of one bucket above 0.2 %, largest first. */
export function compositionAt(m: FleetModel, b: number): { phase: string; fraction: number }[] {
  const out: { phase: string; fraction: number }[] = [];
  let prev = 0;
  m.phases.forEach((p, k) => {
    const top = m.stack[k]![b] ?? 0;
    const frac = top - prev;
    prev = top;
    if (frac > 0.002) out.push({ phase: p, fraction: frac });
  });
  return out.sort((a, b2) => b2.fraction - a.fraction);
}
