import { describe, expect, it } from "vitest";
import type { TraceRow } from "@/lib/contracts/traces";
import { parseTraceSort, sortTraceRows } from "./swimlanes";

const row = (i: number, start: number | null, e2e: number | null, queue: number | null, cached: number | null): TraceRow => ({
  sample_index: i,
  group_index: 0,
  status: "completed",
  start,
  end: start,
  requests: 1,
  e2e_latency: e2e,
  queue_time: queue,
  cached_tokens: cached,
  prompt_tokens: null,
  completion_tokens: null,
  spans: [],
});

describe("request swimlane order", () => {
  const rows = [row(0, 3, 1, 0.5, 10), row(1, 1, 5, null, 2), row(2, 2, null, 0.9, 10), row(3, null, 5, 0.1, null)];
  it("start ascending; the rest descending, missing last, ties in dump order", () => {
    expect(sortTraceRows(rows, "start").map((r) => r.sample_index)).toEqual([1, 2, 0, 3]);
    expect(sortTraceRows(rows, "e2e").map((r) => r.sample_index)).toEqual([1, 3, 0, 2]);
    expect(sortTraceRows(rows, "queue").map((r) => r.sample_index)).toEqual([2, 0, 3, 1]);
    expect(sortTraceRows(rows, "cached").map((r) => r.sample_index)).toEqual([0, 2, 1, 3]);
  });
  it("parses the URL value", () => {
    expect(parseTraceSort("queue")).toBe("queue");
    expect(parseTraceSort("bogus")).toBe("start");
    expect(parseTraceSort(null)).toBe("start");
  });
});
