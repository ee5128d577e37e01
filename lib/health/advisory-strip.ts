/**
 * Ordering and counts for the run header's advisory strip (docs/api.md 10, issue #16
 * part 5): critical first, then warning, then info; the server's order within a level.
 */
export type Level = "critical" | "warning" | "info";

const RANK: Record<Level, number> = { critical: 0, warning: 1, info: 2 };

export function sortAdvisories<A extends { level: Level }>(list: readonly A[]): A[] {
  return list
    .map((a, i) => ({ a, i }))
    .sort((x, y) => RANK[x.a.level] - RANK[y.a.level] || x.i - y.i)
    .map(({ a }) => a);
}

export function advisoryCounts(list: readonly { level: Level }[]): Record<Level, number> {
  const out: Record<Level, number> = { critical: 0, warning: 0, info: 0 };
  for (const a of list) out[a.level]++;
  return out;
}
