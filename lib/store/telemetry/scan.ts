/**
 * Scan primitives over the typed telemetry blocks, so code outside the store never
 * handles chunk geometry (SHIFT / MASK of columns.ts) itself.
 */
import type { GpuBlock, TickColumns } from "@/lib/store/telemetry/blocks";
import { MASK, SHIFT } from "@/lib/store/telemetry/columns";

/** `fn(block, ts, chunk, from, to)`: offsets [from, to) of chunk `chunk` of every column of the block. */
type TickRunFn<B> = (block: B, ts: number, chunk: number, from: number, to: number) => void;

/** Rows [start, end) of one block, as one `fn` call per column chunk they touch. */
function chunkRuns<B>(b: B, ts: number, start: number, end: number, fn: TickRunFn<B>): void {
  for (let r = start; r < end; ) {
    const c = r >>> SHIFT;
    const stop = Math.min(end, (c + 1) << SHIFT);
    fn(b, ts, c, r & MASK, ((stop - 1) & MASK) + 1);
    r = stop;
  }
}

/**
 * Visit the rows with t0 ≤ ts ≤ t1 (null = open) in file order, one tick group at a time,
 * as runs inside one column chunk: `fn(block, ts, chunk, from, to)` covers offsets
 * [from, to) of chunk `chunk` of every column of the block. Callers loop over the typed
 * chunk arrays themselves, which keeps the hot loops monomorphic and free of per-row calls.
 */
export function forEachTickRun<B extends TickColumns>(blocks: readonly B[], t0: number | null, t1: number | null, fn: TickRunFn<B>): void {
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  for (const b of blocks) {
    if (b.rows === 0 || b.maxTs < lo || b.minTs > hi) continue;
    const [g0, g1] = b.groupRange(t0, t1);
    for (let g = g0; g < g1; g++) {
      const ts = b.groupTs(g);
      if (ts < lo || ts > hi) continue;
      chunkRuns(b, ts, b.groupStart(g), b.groupEnd(g), fn);
    }
  }
}

/** `fn(block, chunk, from, to)`: offsets [from, to) of chunk `chunk` of every column of the block. */
type RowRunFn<B> = (block: B, chunk: number, from: number, to: number) => void;

/**
 * The same rows as `forEachTickRun`, in the same order, for callers that do not need each
 * row's ts, in as few calls as the window allows: a block wholly inside [t0, t1] is one run
 * of all its rows; a block whose ticks never decrease holds its rows in the window in one
 * range (from its first tick group in [t0, t1] to its last); any other block (ticks of
 * several nodes interleave, as in most runs) has its consecutive tick groups in the window
 * merged into one run each. One `fn` call per run and column chunk.
 * (#20: one call per tick group — 28,800 per hour of a 64-GPU run — was most of an
 * outliers query, and all of it before the JIT had warmed up.)
 */
export function forEachRowRun<B extends TickColumns>(blocks: readonly B[], t0: number | null, t1: number | null, fn: RowRunFn<B>): void {
  rowRuns(blocks, t0 ?? -Infinity, t1 ?? Infinity, true, fn);
}

/**
 * Every row `forEachRowRun` does not visit (a tick outside [t0, t1]), in file order, the
 * same way: with it, a sum kept per block is corrected for a window that cuts the block.
 */
export function forEachRowRunOutside<B extends TickColumns>(blocks: readonly B[], t0: number | null, t1: number | null, fn: RowRunFn<B>): void {
  rowRuns(blocks, t0 ?? -Infinity, t1 ?? Infinity, false, fn);
}

function rowRuns<B extends TickColumns>(blocks: readonly B[], lo: number, hi: number, inside: boolean, fn: RowRunFn<B>): void {
  const visit: TickRunFn<B> = (b, _ts, c, from, to) => fn(b, c, from, to);
  const run = (b: B, from: number, to: number) => {
    if (from < to) chunkRuns(b, Number.NaN, from, to, visit);
  };
  for (const b of blocks) {
    if (b.rows === 0) continue;
    if (b.maxTs < lo || b.minTs > hi) {
      if (!inside) run(b, 0, b.rows);
      continue;
    }
    if (b.minTs >= lo && b.maxTs <= hi) {
      if (inside) run(b, 0, b.rows);
      continue;
    }
    if (b.sorted) {
      // exactly the groups with lo <= ts <= hi (ts are finite)
      const [g0, g1] = b.groupRange(lo, hi);
      const from = g0 < g1 ? b.groupStart(g0) : 0;
      const to = g0 < g1 ? b.groupEnd(g1 - 1) : 0;
      if (inside) run(b, from, to);
      else {
        run(b, 0, from);
        run(b, to, b.rows);
      }
      continue;
    }
    let start = -1;
    const groups = b.groups;
    for (let g = 0; g < groups; g++) {
      const ts = b.groupTs(g);
      if ((ts < lo || ts > hi) === inside) {
        if (start >= 0) run(b, start, b.groupStart(g));
        start = -1;
      } else if (start < 0) start = b.groupStart(g);
    }
    if (start >= 0) run(b, start, b.rows);
  }
}

/**
 * MAX util per (bucket, lane id) over the rows of `b` with t0 ≤ ts ≤ t1, into `maxima`
 * (cell k·L + lane id, −1 where no row landed yet; L above every lane id of the block),
 * bucket k = `bucket(ts)`, which must not decrease as ts grows (the caller's bucket
 * geometry: the fleet band's and the util heatmap's cells, docs/api.md 8.9, 8.10). A flat
 * block whose `UtilPeaks` are kept reads each chunk of tick groups that lies in the window
 * and inside one bucket as its peaks (a chunk whose lowest and highest ticks share a bucket
 * lies in it whole); every other group is read row by row. Both give the same maxima.
 */
export function maxUtilByBucket(b: GpuBlock, t0: number, t1: number, bucket: (ts: number) => number, maxima: Int16Array, L: number): void {
  if (b.rows === 0 || b.maxTs < t0 || b.minTs > t1) return;
  const f = b.flatUtil();
  if (!f) {
    forEachTickRun([b], t0, t1, (blk, ts, c, from, to) => {
      const base = bucket(ts) * L;
      const lane = blk.lane.chunks[c]!;
      const util = blk.util.chunks[c]!;
      for (let o = from; o < to; o++) {
        const at = base + lane[o]!;
        const u = util[o]!;
        if (u > maxima[at]!) maxima[at] = u;
      }
    });
    return;
  }
  const { gTs, gStart, lane, util } = f;
  const G = gTs.length;
  const rows = b.rows;
  const kept = b.utilPeaks();
  // (a matrix narrower than the block's peaks cannot take their rows)
  const peaks = kept && kept.lanes <= L ? kept : null;
  const K = peaks ? peaks.groupsPerChunk : G + 1;
  const C = peaks ? peaks.lo.length : 0;
  const [g0, g1] = b.groupRange(t0, t1);
  let g = g0;
  while (g < g1) {
    if (peaks && g % K === 0 && g + K <= g1 && g / K < C) {
      const c = g / K;
      const lo = peaks.lo[c]!;
      const hi = peaks.hi[c]!;
      if (lo >= t0 && hi <= t1) {
        const k = bucket(lo);
        if (k === bucket(hi)) {
          const { peak, lanes } = peaks;
          const base = k * L;
          const from = c * lanes;
          for (let l = 0; l < lanes; l++) {
            const u = peak[from + l]!;
            if (u > maxima[base + l]!) maxima[base + l] = u;
          }
          g += K;
          continue;
        }
      }
    }
    const ts = gTs[g]!;
    if (ts >= t0 && ts <= t1) {
      const base = bucket(ts) * L;
      const end = g + 1 < G ? gStart[g + 1]! : rows;
      for (let r = gStart[g]!; r < end; r++) {
        const at = base + lane[r]!;
        const u = util[r]!;
        if (u > maxima[at]!) maxima[at] = u;
      }
    }
    g++;
  }
}
