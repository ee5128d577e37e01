/**
 * Smoothing of line series (docs/charts.md §6): the smoothed line is drawn over the faint
 * raw line, never instead of it. Pure; NaN (a gap) stays a gap and does not reset or feed
 * the smoother.
 *
 *  - `ema`: exponential moving average with the debiasing of TensorBoard / W&B ("debiased
 *    EMA"): `last = w·last + (1−w)·y`, shown as `last / (1 − w^n)` after n finite points,
 *    so the first points are not pulled towards 0. w = 0 is the raw series, w → 1 flat.
 *  - `mean`: trailing running mean over the last `window` finite points.
 */

export type Smoothing = { kind: "none" } | { kind: "ema"; weight: number } | { kind: "mean"; window: number };

export const NO_SMOOTHING: Smoothing = { kind: "none" };
/** The slider's range for the EMA weight. */
export const EMA_MAX = 0.99;
export const MEAN_MAX = 500;

export function isSmoothing(s: Smoothing): boolean {
  return (s.kind === "ema" && s.weight > 0) || (s.kind === "mean" && s.window > 1);
}

/** Debiased EMA; weight is clamped to [0, 0.99]. */
export function ema(y: ArrayLike<number>, weight: number): Float64Array {
  const w = Math.min(EMA_MAX, Math.max(0, weight));
  const out = new Float64Array(y.length);
  let last = 0;
  let n = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i]!;
    if (!Number.isFinite(v)) {
      out[i] = Number.NaN;
      continue;
    }
    last = last * w + (1 - w) * v;
    n++;
    const debias = 1 - Math.pow(w, n);
    out[i] = debias > 0 ? last / debias : v;
  }
  return out;
}

/** Trailing mean of the last `window` finite values (fewer at the start). */
export function runningMean(y: ArrayLike<number>, window: number): Float64Array {
  const k = Math.max(1, Math.floor(window));
  const out = new Float64Array(y.length);
  const ring = new Float64Array(k);
  let sum = 0;
  let count = 0;
  let head = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i]!;
    if (!Number.isFinite(v)) {
      out[i] = Number.NaN;
      continue;
    }
    if (count === k) {
      sum -= ring[head]!;
    } else count++;
    ring[head] = v;
    sum += v;
    head = (head + 1) % k;
    out[i] = sum / count;
  }
  return out;
}

export function smooth(y: ArrayLike<number>, s: Smoothing): Float64Array | null {
  if (!isSmoothing(s)) return null;
  return s.kind === "ema" ? ema(y, s.weight) : runningMean(y, (s as { window: number }).window);
}

/** URL form: `ema:0.6`, `mean:20`; anything else (or off) is none. */
export function encodeSmoothing(s: Smoothing): string | null {
  if (!isSmoothing(s)) return null;
  return s.kind === "ema" ? `ema:${Math.round(s.weight * 100) / 100}` : `mean:${(s as { window: number }).window}`;
}

export function decodeSmoothing(v: string | null | undefined): Smoothing {
  const m = /^(ema|mean):([\d.]+)$/.exec(v ?? "");
  if (!m) return NO_SMOOTHING;
  const n = Number(m[2]);
  if (!Number.isFinite(n)) return NO_SMOOTHING;
  if (m[1] === "ema") return n > 0 ? { kind: "ema", weight: Math.min(EMA_MAX, n) } : NO_SMOOTHING;
  const w = Math.min(MEAN_MAX, Math.floor(n));
  return w > 1 ? { kind: "mean", window: w } : NO_SMOOTHING;
}
