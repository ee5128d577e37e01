/**
 * Scan primitives over the typed telemetry blocks, so code outside the store never
 * handles chunk geometry (SHIFT / MASK of columns.ts) itself.
 */
import type { TickColumns } from "@/lib/store/telemetry/blocks";
import { MASK, SHIFT } from "@/lib/store/telemetry/columns";

/**
 * Visit the rows with t0 ≤ ts ≤ t1 (null = open) in file order, one tick group at a time,
 * as runs inside one column chunk: `fn(block, ts, chunk, from, to)` covers offsets
 * [from, to) of chunk `chunk` of every column of the block. Callers loop over the typed
 * chunk arrays themselves, which keeps the hot loops monomorphic and free of per-row calls.
 */
export function forEachTickRun<B extends TickColumns>(
  blocks: readonly B[],
  t0: number | null,
  t1: number | null,
  fn: (block: B, ts: number, chunk: number, from: number, to: number) => void,
): void {
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  for (const b of blocks) {
    if (b.rows === 0 || b.maxTs < lo || b.minTs > hi) continue;
    const [g0, g1] = b.groupRange(t0, t1);
    for (let g = g0; g < g1; g++) {
      const ts = b.groupTs(g);
      if (ts < lo || ts > hi) continue;
      let r = b.groupStart(g);
      const end = b.groupEnd(g);
      while (r < end) {
        const c = r >>> SHIFT;
        const stop = Math.min(end, (c + 1) << SHIFT);
        fn(b, ts, c, r & MASK, ((stop - 1) & MASK) + 1);
        r = stop;
      }
    }
  }
}

/**
 * The same rows as `forEachTickRun`, for callers that do not need each row's ts: a block
 * whose ticks never decrease holds them in one range of rows (from its first tick group
 * in [t0, t1] to its last), visited as one run per column chunk instead of one call per
 * tick group; any other block is visited group by group. `fn(block, chunk, from, to)`.
 */
export function forEachRowRun<B extends TickColumns>(
  blocks: readonly B[],
  t0: number | null,
  t1: number | null,
  fn: (block: B, chunk: number, from: number, to: number) => void,
): void {
  const lo = t0 ?? -Infinity;
  const hi = t1 ?? Infinity;
  const runs = (b: B, start: number, end: number) => {
    let r = start;
    while (r < end) {
      const c = r >>> SHIFT;
      const stop = Math.min(end, (c + 1) << SHIFT);
      fn(b, c, r & MASK, ((stop - 1) & MASK) + 1);
      r = stop;
    }
  };
  for (const b of blocks) {
    if (b.rows === 0 || b.maxTs < lo || b.minTs > hi) continue;
    const [g0, g1] = b.groupRange(t0, t1);
    if (g0 >= g1) continue;
    if (b.sorted) {
      // groupRange of a sorted block is exactly its groups with lo <= ts <= hi (ts are finite)
      runs(b, b.groupStart(g0), b.groupEnd(g1 - 1));
      continue;
    }
    for (let g = g0; g < g1; g++) {
      const ts = b.groupTs(g);
      if (ts < lo || ts > hi) continue;
      runs(b, b.groupStart(g), b.groupEnd(g));
    }
  }
}
