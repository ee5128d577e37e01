/**
 * Masked float32 statistics of the L1 summary (docs/api.md 3). The reference computes
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

// ---- fused masked statistics (the summary's hot path: no intermediate arrays)

/** `mask > 0` per element as 0/1 bytes (null mask ⇒ null: every element selected). */
export function maskBits(mask: NumArray | null, n: number): Uint8Array | null {
  if (mask === null) return null;
  const out = new Uint8Array(n);
  const m = Math.min(n, mask.length);
  for (let i = 0; i < m; i++) out[i] = (mask[i] as number) > 0 ? 1 : 0;
  return out;
}

export interface MaskedMoments {
  /** `meanF32(maskedF32(x, mask))`. */
  mean: number | null;
  /** `maxF32(maskedF32(x, mask))`. */
  max: number | null;
  /** `stdF32(maskedF32(x, mask))`. */
  std: number | null;
}

/**
 * mean / max / std of the float32-rounded masked selection of `x` in one or two passes,
 * bit-identical to the maskedF32 → meanF32/maxF32/stdF32 chain (same summation order).
 * `bits` from `maskBits` (null = all selected).
 */
export function maskedMoments(x: NumArray | null, bits: Uint8Array | null, wantStd = false): MaskedMoments {
  if (x === null) return { mean: null, max: null, std: null };
  const n = x.length;
  let k = 0;
  let s = 0;
  let m = -Infinity;
  let nan = false;
  for (let i = 0; i < n; i++) {
    if (bits !== null && bits[i] !== 1) continue;
    const v = Math.fround(x[i] as number);
    k++;
    s += v;
    if (v > m) m = v;
    else if (v !== v) nan = true;
  }
  if (k === 0) return { mean: null, max: null, std: null };
  let std: number | null = null;
  if (wantStd) {
    if (k < 2) std = NaN;
    else {
      const mean = s / k;
      let ss = 0;
      for (let i = 0; i < n; i++) {
        if (bits !== null && bits[i] !== 1) continue;
        const d = Math.fround(x[i] as number) - mean;
        ss += d * d;
      }
      std = Math.fround(Math.sqrt(ss / (k - 1)));
    }
  }
  return { mean: Math.fround(s / k), max: nan ? NaN : m, std };
}

export interface LpDiffStats {
  /** mean / max of |f32(a − b)| over the selection. */
  meanAbs: number | null;
  maxAbs: number | null;
  /** mean of f32(exp(f32(a − b))) over the selection. */
  meanExp: number | null;
}

/**
 * Statistics of `lp_diff = f32(a − b)` over the masked selection, bit-identical to
 * `diffF32` → `maskedF32` → `mapF32(abs | exp)` → `meanF32` / `maxF32`. Null inputs or
 * different lengths ⇒ all null (like `diffF32`).
 */
export function lpDiffStats(a: NumArray | null, b: NumArray | null, bits: Uint8Array | null): LpDiffStats {
  if (a === null || b === null || a.length !== b.length) return { meanAbs: null, maxAbs: null, meanExp: null };
  const n = a.length;
  let k = 0;
  let sa = 0;
  let se = 0;
  let m = -Infinity;
  let nan = false;
  for (let i = 0; i < n; i++) {
    if (bits !== null && bits[i] !== 1) continue;
    const d = Math.fround((a[i] as number) - (b[i] as number));
    const ad = Math.abs(d);
    k++;
    sa += ad;
    se += Math.fround(Math.exp(d));
    if (ad > m) m = ad;
    else if (ad !== ad) nan = true;
  }
  if (k === 0) return { meanAbs: null, maxAbs: null, meanExp: null };
  return { meanAbs: Math.fround(sa / k), maxAbs: nan ? NaN : m, meanExp: Math.fround(se / k) };
}
