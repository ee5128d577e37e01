import { describe, expect, it } from "vitest";
import type { GetSampleTraceResponse, TraceSpan } from "@/lib/contracts/traces";
import { attrLines, layoutTrace } from "./layout";

const span = (id: string, parent: string | null, name: string, kind: TraceSpan["kind"], depth: number, start: number, end: number | null, lane: "P" | "D" | null = null, req: string | null = null): TraceSpan => ({
  span_id: id,
  parent_span_id: parent,
  name,
  kind,
  depth,
  lane,
  request_span_id: req,
  start,
  end,
  attrs: { a: 1 },
});

const trace: GetSampleTraceResponse = {
  rollout_id: 0,
  evaluation: false,
  sample_index: 3,
  group_index: 0,
  trace_id: "t",
  attempt: 0,
  t0: 100,
  t1: 110,
  spans: [
    span("s", null, "generate_and_rm", "sample", 0, 100, 110),
    span("g", "s", "sglang_generate", "generate", 1, 101, 108),
    span("p", "g", "sglang_pd_prefill", "pd_prefill", 2, 101, 102, "P", "g"),
    span("p1", "p", "sglang_pd_prefill_forward", "pd_prefill", 3, 101, 102, "P", "g"),
    span("d", "g", "sglang_pd_decode", "pd_decode", 2, 102, 108, "D", "g"),
    span("r", "s", "reward_model", "reward", 1, 108.5, 109),
    span("x", "s", "tool_call", "tool", 1, 109, null),
  ],
  events: [{ name: "sglang_pd_summary", ts: 108, parent_span_id: "g", attrs: { pd_transfer_total_mb: 4 } }],
  requests: [],
};

describe("trace timeline layout", () => {
  it("rows in tree order with [P] and [D] lanes under the generation; events on their span's row", () => {
    const l = layoutTrace(trace);
    expect(l.t0).toBe(100);
    expect(l.span).toBe(10);
    expect(l.rows.map((r) => r.label)).toEqual(["generate_and_rm", "sglang_generate", "[P]", "[D]", "reward_model", "tool_call"]);
    expect(l.rows.map((r) => r.depth)).toEqual([0, 1, 2, 2, 1, 1]);
    const p = l.rows[2]!;
    expect(p.bars.map((b) => [b.span.name, b.back])).toEqual([
      ["sglang_pd_prefill", true],
      ["sglang_pd_prefill_forward", false],
    ]);
    expect(l.rows[3]!.bars.map((b) => b.back)).toEqual([false]);
    expect(l.rows[1]!.marks.map((m) => [m.event.name, m.x])).toEqual([["sglang_pd_summary", 8]]);
    const open = l.rows[5]!.bars[0]!;
    expect([open.open, open.x0, open.x1]).toEqual([true, 9, 10]);
  });
  it("hover lines show every attr", () => {
    expect(attrLines({ s: "stop", n: 1.5, o: { a: 1 }, z: null })).toEqual([
      ["s", "stop"],
      ["n", "1.5"],
      ["o", '{"a":1}'],
      ["z", "null"],
    ]);
  });
});
