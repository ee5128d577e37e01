/**
 * Binary searches over an ascending run of numbers (a typed array or a plain one), for
 * every layer: the chart core, the stores and the endpoint logic. Imports nothing.
 * `lo`/`hi` bound the searched range [lo, hi); the answer lies in [lo, hi].
 */

/** First index i in [lo, hi) with xs[i] >= v (hi when there is none). */
export function lowerBound(xs: ArrayLike<number>, v: number, lo = 0, hi = xs.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index i in [lo, hi) with xs[i] > v (hi when there is none). */
export function upperBound(xs: ArrayLike<number>, v: number, lo = 0, hi = xs.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
