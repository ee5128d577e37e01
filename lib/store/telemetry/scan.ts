/**
 * Scan primitives over the typed telemetry blocks, so code outside the store never
 * handles chunk geometry (SHIFT / MASK of columns.ts) itself.
 */
import type { TickColumns } from "@/lib/store/telemetry/blocks";
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

/**
 * The same rows as `forEachTickRun`, for callers that do not need each row's ts: a block
 * whose ticks never decrease holds them in one range of rows (from its first tick group
 * in [t0, t1] to its last), visited as one run per column chunk instead of one call per
 * tick group; any other block goes through `forEachTickRun`. `fn(block, chunk, from, to)`.
 */
export function forEachRowRun<B extends TickColumns>(
  blocks: readonly B[],
  t0: number | null,
  t1: number | null,
  fn: (block: B, chunk: number, from: number, to: number) => void,
): void {
  const visit: TickRunFn<B> = (b, _ts, c, from, to) => fn(b, c, from, to);
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  for (const b of blocks) {
    if (!b.sorted) {
      forEachTickRun([b], t0, t1, visit);
      continue;
    }
    if (b.rows === 0 || b.maxTs < lo || b.minTs > hi) continue;
    // groupRange of a sorted block is exactly its groups with lo <= ts <= hi (ts are finite)
    const [g0, g1] = b.groupRange(t0, t1);
    if (g0 < g1) chunkRuns(b, Number.NaN, b.groupStart(g0), b.groupEnd(g1 - 1), visit);
  }
}
