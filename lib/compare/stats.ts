/** Robust statistics of the compare report (docs/api.md "GET /api/compare"). */

/** Median of finite values (NaN-free input); null for none. Sorts a copy. */
export function median(xs: ArrayLike<number>): number | null {
  if (xs.length === 0) return null;
  const s = Float64Array.from(xs).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function peak(xs: ArrayLike<number>): number | null {
  if (xs.length === 0) return null;
  let p = -Infinity;
  for (let i = 0; i < xs.length; i++) if (xs[i]! > p) p = xs[i]!;
  return p;
}

/** Consistency constant making the MAD estimate σ for normal data. */
export const MAD_SCALE = 1.4826;

/**
 * The baseline's spread used to scale a mover's shift: the scaled median absolute
 * deviation (1.4826 · median |x − median|); when more than half the steps sit exactly on
 * the median (MAD = 0) the mean absolute deviation instead; 0 only for a constant series.
 */
export function spread(xs: ArrayLike<number>): number | null {
  const m = median(xs);
  if (m === null) return null;
  const dev = new Float64Array(xs.length);
  for (let i = 0; i < xs.length; i++) dev[i] = Math.abs(xs[i]! - m);
  const mad = median(dev)!;
  if (mad > 0) return MAD_SCALE * mad;
  let sum = 0;
  for (let i = 0; i < dev.length; i++) sum += dev[i]!;
  return sum / dev.length;
}
