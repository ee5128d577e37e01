/**
 * Density reduction for drawing: per-pixel-column M4 (first, min, max, last of every
 * column), so spikes and dips always survive (the original averaged buckets and hid
 * them). NaN is a gap: a column is closed at a gap and a NaN break is emitted, so a line
 * never bridges missing data. Columns are sorted x (binary searches assume it).
 */
import { lowerBound, upperBound } from "@/lib/bisect";

/**
 * Index range [i0, i1) to draw for the window [x0, x1]: the points inside plus one
 * neighbour on each side, so the line runs to the plot edge (it is clipped there).
 */
export function visibleRange(xs: ArrayLike<number>, x0: number, x1: number): [number, number] {
  const a = lowerBound(xs, x0);
  const b = upperBound(xs, x1);
  return [Math.max(0, a - 1), Math.min(xs.length, b + 1)];
}

/** Index of the sample nearest to v in x, or -1 when empty. */
export function nearestIndex(xs: ArrayLike<number>, v: number): number {
  const n = xs.length;
  if (n === 0) return -1;
  const i = lowerBound(xs, v);
  if (i <= 0) return 0;
  if (i >= n) return n - 1;
  return v - xs[i - 1]! <= xs[i]! - v ? i - 1 : i;
}

/** Nearest index whose y is finite, looking outwards from the x-nearest one; -1 if none within maxSteps. */
export function nearestFiniteIndex(xs: ArrayLike<number>, ys: ArrayLike<number>, v: number, maxSteps = 64): number {
  const i = nearestIndex(xs, v);
  if (i < 0) return -1;
  if (Number.isFinite(ys[i]!)) return i;
  for (let d = 1; d <= maxSteps; d++) {
    const l = i - d;
    const r = i + d;
    const lOk = l >= 0 && Number.isFinite(ys[l]!);
    const rOk = r < xs.length && Number.isFinite(ys[r]!);
    if (lOk && rOk) return v - xs[l]! <= xs[r]! - v ? l : r;
    if (lOk) return l;
    if (rOk) return r;
  }
  return -1;
}

export interface Reduced {
  x: Float64Array;
  y: Float64Array;
  /** number of valid entries in x/y (the arrays may be longer) */
  length: number;
  /** input points in the window */
  inputCount: number;
  /** true when points were merged (the chart shows a "reduced" mark) */
  reduced: boolean;
}

class Out {
  x: Float64Array;
  y: Float64Array;
  n = 0;
  constructor(cap: number) {
    this.x = new Float64Array(Math.max(8, cap));
    this.y = new Float64Array(Math.max(8, cap));
  }
  push(x: number, y: number): void {
    if (this.n === this.x.length) {
      const nx = new Float64Array(this.x.length * 2);
      nx.set(this.x);
      const ny = new Float64Array(this.y.length * 2);
      ny.set(this.y);
      this.x = nx;
      this.y = ny;
    }
    this.x[this.n] = x;
    this.y[this.n] = y;
    this.n++;
  }
  gap(): void {
    if (this.n > 0 && !Number.isNaN(this.y[this.n - 1]!)) this.push(this.x[this.n - 1]!, Number.NaN);
  }
}

/**
 * Reduce the window [x0, x1] of (xs, ys) for a plot `widthPx` wide. When the window holds
 * at most `threshold` points (default: one per pixel) the raw points are returned.
 */
export function reduceM4(
  xs: ArrayLike<number>,
  ys: ArrayLike<number>,
  x0: number,
  x1: number,
  widthPx: number,
  threshold = Math.max(2, Math.floor(widthPx)),
): Reduced {
  const [i0, i1] = visibleRange(xs, x0, x1);
  const count = i1 - i0;
  const span = x1 - x0;
  if (count <= threshold || !(span > 0) || widthPx < 1) {
    const out = new Out(count + 1);
    for (let i = i0; i < i1; i++) {
      const y = ys[i]!;
      if (Number.isFinite(y)) out.push(xs[i]!, y);
      else out.gap();
    }
    return { x: out.x, y: out.y, length: out.n, inputCount: count, reduced: false };
  }
  const out = new Out(Math.min(count, Math.ceil(widthPx) * 4 + 16));
  const k = widthPx / span;
  let col = Number.NaN;
  let first = -1;
  let last = -1;
  let lo = -1;
  let hi = -1;
  const flush = () => {
    if (first < 0) return;
    // emit the (up to 4) chosen indices in index order, without duplicates
    const a = [first, lo, hi, last].sort((p, q) => p - q);
    let prev = -1;
    for (const i of a) {
      if (i !== prev) out.push(xs[i]!, ys[i]!);
      prev = i;
    }
    first = last = lo = hi = -1;
  };
  for (let i = i0; i < i1; i++) {
    const y = ys[i]!;
    if (!Number.isFinite(y)) {
      flush();
      out.gap();
      col = Number.NaN;
      continue;
    }
    const c = Math.floor((xs[i]! - x0) * k);
    if (c !== col) {
      flush();
      col = c;
    }
    if (first < 0) {
      first = last = lo = hi = i;
      continue;
    }
    last = i;
    if (y < ys[lo]!) lo = i;
    if (y > ys[hi]!) hi = i;
  }
  flush();
  return { x: out.x, y: out.y, length: out.n, inputCount: count, reduced: true };
}

/**
 * [min, max] of the finite ys whose x lies in [x0, x1]; null when none. Ascending xs are
 * searched; unsorted ones (scatter) are scanned.
 */
export function yExtentInWindow(xs: ArrayLike<number>, ys: ArrayLike<number>, x0: number, x1: number, sorted = true): [number, number] | null {
  const a = sorted ? lowerBound(xs, x0) : 0;
  const b = sorted ? upperBound(xs, x1) : xs.length;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = a; i < b; i++) {
    const y = ys[i]!;
    const x = xs[i]!;
    if (!Number.isFinite(y) || x < x0 || x > x1) continue;
    if (y < lo) lo = y;
    if (y > hi) hi = y;
  }
  return lo <= hi ? [lo, hi] : null;
}

/**
 * Per-pixel-column envelope of a dense series, for drawing it as one 1-px bar per
 * column instead of a polygon through every M4 point. Filling a zig-zag polygon with
 * thousands of sub-pixel edges is the slowest thing a software-rasterised 2D canvas does
 * (~100 ms for one noisy GPU lane); axis-aligned 1-px rects cost ~5 ms for the same
 * picture. Per column c: `lo`/`hi` = min/max of its samples; `barLo`/`barHi` also reach
 * the previous column's last value, so consecutive columns join like a line would.
 * Columns without samples between two samples are interpolated (a line bridges them
 * too); a NaN sample is a gap that nothing bridges. NaN in the output = draw nothing.
 *
 * Returns null when the window holds at most one point per column: then the raw points
 * are few and a path is both cheap and exact (reduceM4 returns them).
 */
export interface ColumnEnvelope {
  cols: number;
  lo: Float32Array;
  hi: Float32Array;
  barLo: Float32Array;
  barHi: Float32Array;
}

export function columnEnvelope(xs: ArrayLike<number>, ys: ArrayLike<number>, x0: number, x1: number, widthPx: number): ColumnEnvelope | null {
  const [i0, i1] = visibleRange(xs, x0, x1);
  const span = x1 - x0;
  if (i1 - i0 <= Math.max(2, Math.floor(widthPx)) || !(span > 0) || widthPx < 1) return null;
  const cols = Math.ceil(widthPx);
  const k = widthPx / span;
  const lo = new Float32Array(cols).fill(Number.NaN);
  const hi = new Float32Array(cols).fill(Number.NaN);
  const last = new Float32Array(cols).fill(Number.NaN);
  const joined = new Uint8Array(cols);
  const put = (c: number, y: number, join: boolean) => {
    if (Number.isNaN(lo[c]!)) {
      lo[c] = hi[c] = y;
      joined[c] = join ? 1 : 0;
    } else {
      if (y < lo[c]!) lo[c] = y;
      if (y > hi[c]!) hi[c] = y;
    }
    last[c] = y;
  };
  // the previous finite sample (column, value); NaN column = none, or a gap since
  let pc = Number.NaN;
  let pv = Number.NaN;
  for (let i = i0; i < i1; i++) {
    const y = ys[i]!;
    if (!Number.isFinite(y)) {
      pc = Number.NaN;
      continue;
    }
    const c = Math.floor((xs[i]! - x0) * k);
    const has = !Number.isNaN(pc);
    if (has && c - pc > 1) {
      // bridge the empty columns between the previous sample and this one
      for (let b = Math.max(0, pc + 1); b < Math.min(c, cols); b++) put(b, pv + ((y - pv) * (b - pc)) / (c - pc), b > 0);
    }
    if (c >= 0 && c < cols) put(c, y, has && c - pc >= 1);
    pc = c;
    pv = y;
    if (c >= cols) break;
  }
  const barLo = new Float32Array(cols);
  const barHi = new Float32Array(cols);
  for (let c = 0; c < cols; c++) {
    let a = lo[c]!;
    let b = hi[c]!;
    const p = c > 0 ? last[c - 1]! : Number.NaN;
    if (joined[c] && !Number.isNaN(a) && !Number.isNaN(p)) {
      if (p < a) a = p;
      if (p > b) b = p;
    }
    barLo[c] = a;
    barHi[c] = b;
  }
  return { cols, lo, hi, barLo, barHi };
}

/** The path calls a column outline makes (a CanvasRenderingContext2D or a Path2D has them). */
export interface PathSink {
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  closePath(): void;
}

/**
 * Columns c ∈ [0, cols) as 1-px boxes [x0 + c, x0 + c + 1] × [top[c], bottom[c]] (top NaN:
 * no box), traced as one closed outline per run of consecutive boxes: along the tops left
 * to right, back along the bottoms. Inside the strip of column c the outline's only
 * horizontal edges are that column's top and bottom, so it covers exactly the union of
 * the boxes (nonzero winding, whatever the neighbours' spans) — the pixels of one
 * `rect` per column. A software rasteriser pays per edge crossing a scanline: a path of
 * 1,330 rects has 2,660 on every row of a lane's util area, the outline two per step
 * of the tops (Chromium, 32 lanes: 200 → 70 ms). Equal neighbours add no vertex.
 */
export function traceColumns(p: PathSink, cols: number, x0: number, top: ArrayLike<number>, bottom: ArrayLike<number>): void {
  let c = 0;
  while (c < cols) {
    if (Number.isNaN(top[c]!)) {
      c++;
      continue;
    }
    const first = c;
    while (c < cols && !Number.isNaN(top[c]!)) c++;
    const last = c - 1;
    let y = top[first]!;
    p.moveTo(x0 + first, y);
    for (let k = first + 1; k <= last; k++) {
      const t = top[k]!;
      if (t === y) continue;
      p.lineTo(x0 + k, y);
      p.lineTo(x0 + k, t);
      y = t;
    }
    p.lineTo(x0 + last + 1, y);
    y = bottom[last]!;
    p.lineTo(x0 + last + 1, y);
    for (let k = last - 1; k >= first; k--) {
      const b = bottom[k]!;
      if (b === y) continue;
      p.lineTo(x0 + k + 1, y);
      p.lineTo(x0 + k + 1, b);
      y = b;
    }
    p.lineTo(x0 + first, y);
    p.closePath();
  }
}

/** Index of the finite point nearest in pixels to (px, py), within `maxPx`; -1 if none (scatter picking). */
export function nearestInPixels(
  xs: ArrayLike<number>,
  ys: ArrayLike<number>,
  sx: (x: number) => number,
  sy: (y: number) => number,
  px: number,
  py: number,
  maxPx: number,
): number {
  let best = -1;
  let bestD = maxPx * maxPx;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i]!;
    if (!Number.isFinite(y)) continue;
    const dx = sx(xs[i]!) - px;
    const dy = sy(y) - py;
    const d = dx * dx + dy * dy;
    if (d <= bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}
