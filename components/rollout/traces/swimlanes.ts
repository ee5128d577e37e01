/**
 * Order of the Step view's request swimlanes (docs/views.md 5 "request traces"): by start
 * (default), or descending by e2e latency, queue time or cached tokens (the sample's sums
 * over its SGLang calls); rows without the value go last, ties keep dump order.
 */
import type { TraceRow } from "@/lib/contracts/traces";

export const TRACE_SORTS = ["start", "e2e", "queue", "cached"] as const;
export type TraceSort = (typeof TRACE_SORTS)[number];
export const TRACE_SORT_LABEL: Record<TraceSort, string> = { start: "start", e2e: "e2e latency", queue: "queue time", cached: "cached tokens" };

const pick: Record<TraceSort, (r: TraceRow) => number | null> = {
  start: (r) => r.start,
  e2e: (r) => r.e2e_latency,
  queue: (r) => r.queue_time,
  cached: (r) => r.cached_tokens,
};

export function parseTraceSort(raw: string | null): TraceSort {
  return (TRACE_SORTS as readonly string[]).includes(raw ?? "") ? (raw as TraceSort) : "start";
}

export function sortTraceRows(rows: readonly TraceRow[], sort: TraceSort): TraceRow[] {
  const f = pick[sort];
  const dir = sort === "start" ? 1 : -1;
  return rows
    .map((r, i) => ({ r, i, v: f(r) }))
    .sort((a, b) => {
      if (a.v === null || b.v === null) return a.v === b.v ? a.i - b.i : a.v === null ? 1 : -1;
      return a.v === b.v ? a.i - b.i : dir * (a.v - b.v);
    })
    .map((x) => x.r);
}
