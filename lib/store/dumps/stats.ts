/**
 * Masked float32 statistics of the L1 summary (spec api.md 3). The reference computes
 * them with torch in float32; we accumulate in doubles over float32-rounded inputs and
 * round the result to float32, which agrees to ≈1e-7 relative. `std` is Bessel-corrected
 * (n−1) and NaN for a single element, like torch.
 */
import type { NumArray } from "./types";

/**
 * The elements of `x` where `mask[i] > 0`, as float32; null when `x` is null or the
 * selection is empty (masked tokens never enter a statistic).
 */
export function maskedF32(x: NumArray | null, mask: NumArray | null): Float32Array | null {
  if (x === null) return null;
  const n = x.length;
  const out = new Float32Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (mask === null || (mask[i] ?? 0) > 0) out[k++] = x[i] as number;
  }
  return k === 0 ? null : out.subarray(0, k);
}

export function meanF32(x: Float32Array | null): number | null {
  if (x === null || x.length === 0) return null;
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] as number;
  return Math.fround(s / x.length);
}

export function maxF32(x: Float32Array | null): number | null {
  if (x === null || x.length === 0) return null;
  let m = -Infinity;
  for (let i = 0; i < x.length; i++) {
    const v = x[i] as number;
    if (Number.isNaN(v)) return NaN; // torch.max propagates NaN
    if (v > m) m = v;
  }
  return m;
}

/** torch.std: unbiased (n−1); NaN for one element. */
export function stdF32(x: Float32Array | null): number | null {
  if (x === null || x.length === 0) return null;
  const n = x.length;
  if (n < 2) return NaN;
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i] as number;
  const mean = s / n;
  let ss = 0;
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - mean;
    ss += d * d;
  }
  return Math.fround(Math.sqrt(ss / (n - 1)));
}

/** Element-wise float32 `a − b`; null when either is null or lengths differ. */
export function diffF32(a: NumArray | null, b: NumArray | null): Float32Array | null {
  if (a === null || b === null || a.length !== b.length) return null;
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) - (b[i] as number);
  return out;
}

export function mapF32(x: Float32Array | null, f: (v: number) => number): Float32Array | null {
  if (x === null) return null;
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = f(x[i] as number);
  return out;
}

// ---- polars-style (float64, null-skipping) aggregates used by groups / step aggregates

/** Mean of the non-null values; null when there are none. NaN propagates. */
export function meanSkipNull(values: readonly (number | null)[]): number | null {
  let s = 0;
  let n = 0;
  for (const v of values) {
    if (v === null) continue;
    s += v;
    n++;
  }
  return n === 0 ? null : s / n;
}

/** Sample std (ddof 1) of the non-null values; null when fewer than two. */
export function stdSkipNull(values: readonly (number | null)[]): number | null {
  const xs = values.filter((v): v is number => v !== null);
  const n = xs.length;
  if (n < 2) return null;
  let s = 0;
  for (const v of xs) s += v;
  const mean = s / n;
  let ss = 0;
  for (const v of xs) ss += (v - mean) * (v - mean);
  return Math.sqrt(ss / (n - 1));
}

export function boolToNum(v: boolean | null): number | null {
  return v === null ? null : v ? 1 : 0;
}
