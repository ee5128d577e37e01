/**
 * Exact index selection (docs/api.md 8.7), reproducing numpy `linspace` + truncation so the
 * chosen points are the reference's to the index.
 */

/** numpy.linspace(a, b, k) (endpoint=True): a + i·step, last value exactly b. */
export function linspace(a: number, b: number, k: number): Float64Array {
  const out = new Float64Array(k);
  if (k === 1) {
    out[0] = a;
    return out;
  }
  const step = (b - a) / (k - 1);
  for (let i = 0; i < k; i++) out[i] = step === 0 ? (i / (k - 1)) * (b - a) + a : i * step + a;
  out[k - 1] = b;
  return out;
}

/** Stride selection: null when `n ≤ M` (keep everything). Endpoints are kept. */
export function strideIndices(n: number, M: number): Int32Array | null {
  if (n <= M) return null;
  const lin = linspace(0, n - 1, M);
  const out = new Int32Array(M);
  for (let i = 0; i < M; i++) out[i] = Math.trunc(lin[i]!);
  return out;
}

/**
 * Min/max bucket selection on `values`: `floor(M/2)` buckets with edges
 * trunc(linspace(0, n, B+1)); per non-empty bucket the first minimum and first maximum
 * survive. Returns sorted unique indices, or null when `n ≤ M`.
 */
export function minMaxIndices(values: ArrayLike<number>, M: number): number[] | null {
  const n = values.length;
  if (n <= M) return null;
  const B = Math.floor(M / 2);
  const edges = linspace(0, n, B + 1);
  const out: number[] = [];
  for (let b = 0; b < B; b++) {
    const lo = Math.trunc(edges[b]!);
    const hi = Math.trunc(edges[b + 1]!);
    if (hi <= lo) continue;
    let iMin = lo;
    let iMax = lo;
    let vMin = values[lo]!;
    let vMax = vMin;
    for (let i = lo + 1; i < hi; i++) {
      const v = values[i]!;
      if (v < vMin) {
        vMin = v;
        iMin = i;
      }
      if (v > vMax) {
        vMax = v;
        iMax = i;
      }
    }
    if (iMin < iMax) out.push(iMin, iMax);
    else if (iMax < iMin) out.push(iMax, iMin);
    else out.push(iMin);
  }
  return out;
}

/** The selected elements (all when `idx` is null) as a plain array (JSON-ready, packed: `packedNumbers`). */
export function pickNumbers(arr: ArrayLike<number>, idx: ArrayLike<number> | null): number[] {
  const n = idx === null ? arr.length : idx.length;
  const out = packedNumbers(n, true);
  for (let i = 0; i < n; i++) out[i] = arr[idx === null ? i : idx[i]!]!;
  return out;
}

let smallInts: number[] = [];
let doubles: number[] = [];

/**
 * A plain array of `n` numbers to be overwritten, "packed" in V8's sense. JSON.stringify
 * writes packed arrays of numbers on its fast path; an array made by `new Array(n)` stays
 * holey however it is filled and is written element by element (a 32-lane GPU window's
 * 3.5 MB of text: 48 → 30 ms; small integers 4× faster; docs/bench.md "12-06 h"). A
 * slice of a packed template costs what `new Array(n)` costs, where appending `n` elements
 * one by one leaves the garbage of every intermediate size. `withDoubles`: the template
 * holds doubles, so writing non-integers does not convert the slice once more. Answers'
 * arrays are at most `max_points` or `x_buckets` long (≤ 40,000), so a template stays
 * ≤ 320 KB.
 */
export function packedNumbers(n: number, withDoubles: boolean): number[] {
  let t = withDoubles ? doubles : smallInts;
  if (t.length < n) {
    t = [];
    for (let i = 0; i < n; i++) t.push(withDoubles ? 0.5 : 0);
    if (withDoubles) doubles = t;
    else smallInts = t;
  }
  return t.slice(0, n);
}
