import { describe, expect, it } from "vitest";
import { aggregatePerf, parseTrace, traceRequests } from "@/lib/rollout/perf";

let n = 0;
const id = () => `s${++n}`;

/** A trace with one request span; `pd`: child spans; `flat`: pd_* attrs on the span end. */
function trace(opts: { name?: string; end: Record<string, unknown>; children?: { name: string; attrs: Record<string, unknown> }[]; summary?: Record<string, unknown>; open?: boolean }) {
  const root = id();
  const gen = id();
  const events: Record<string, unknown>[] = [
    { type: "span_start", name: "generate_and_rm", ts: 1, span_id: root },
    { type: "span_start", name: opts.name ?? "sglang_generate", ts: 2, span_id: gen, parent_span_id: root },
  ];
  const pd = id();
  if (opts.children) {
    events.push({ type: "span_start", name: "sglang_pd_prefill", ts: 2, span_id: pd, parent_span_id: gen });
    for (const c of opts.children) {
      const cid = id();
      events.push({ type: "span_start", name: c.name, ts: 2, span_id: cid, parent_span_id: pd });
      events.push({ type: "span_end", name: c.name, ts: 3, span_id: cid, attrs: c.attrs });
    }
    events.push({ type: "span_end", name: "sglang_pd_prefill", ts: 3, span_id: pd, attrs: { phase: "prefill" } });
  }
  if (opts.summary) events.push({ type: "event", name: "sglang_pd_summary", ts: 3, parent_span_id: gen, attrs: opts.summary });
  if (!opts.open) events.push({ type: "span_end", name: opts.name ?? "sglang_generate", ts: 4, span_id: gen, attrs: opts.end });
  events.push({ type: "span_end", name: "generate_and_rm", ts: 5, span_id: root });
  return { version: 1, trace_id: "t", sample_id: 0, group_id: 0, attempt: 0, events };
}

const requests = (...traces: unknown[]) => traces.flatMap((t) => traceRequests(parseTrace(t)!));

describe("perf aggregation (slime's rule)", () => {
  it("mean / median / max / min per field, skipping non-finite and non-numeric values per field", () => {
    const out = aggregatePerf(
      requests(
        trace({ end: { e2e_latency: 1, queue_time: 0.5 } }),
        trace({ end: { e2e_latency: 3, queue_time: "0.1" } }),
        trace({ end: { e2e_latency: 2, queue_time: null, decode_throughput: true } }),
        trace({ end: { e2e_latency: 10, queue_time: 0.25 } }),
        trace({ end: { e2e_latency: Number.NaN, queue_time: Number.POSITIVE_INFINITY } }),
        trace({ end: { finish_reason: "stop" } }),
      ),
    );
    expect(out).toEqual({
      "perf/request/e2e_latency/max": 10,
      "perf/request/e2e_latency/mean": 4,
      "perf/request/e2e_latency/median": 2.5,
      "perf/request/e2e_latency/min": 1,
      "perf/request/queue_time/max": 0.5,
      "perf/request/queue_time/mean": 0.375,
      "perf/request/queue_time/median": 0.375,
      "perf/request/queue_time/min": 0.25,
      // no decode throughput key at all: its only value was a bool
      "perf/request/count": 6,
      "perf/request/profiled_count": 4,
    });
  });

  it("reads PD values from the child spans and the summary event; flat pd_* attrs on the span end win", () => {
    const child = trace({
      end: { e2e_latency: 1 },
      children: [{ name: "sglang_pd_prefill_forward", attrs: { pd_prefill_forward_duration: 0.25 } }],
      summary: { pd_transfer_speed_gb_s: 12, pd_prefill_retry_count: 1 },
    });
    const flat = trace({ end: { e2e_latency: 2, pd_prefill_forward_duration: 0.75, pd_decode_transfer_duration: 0.5 } });
    const both = trace({
      end: { e2e_latency: 3, pd_prefill_forward_duration: 2 },
      children: [{ name: "sglang_pd_prefill_forward", attrs: { pd_prefill_forward_duration: 99 } }],
    });
    const out = aggregatePerf(requests(child, flat, both));
    expect(out["perf/prefill/forward_duration/min"]).toBe(0.25);
    expect(out["perf/prefill/forward_duration/max"]).toBe(2);
    expect(out["perf/prefill/forward_duration/median"]).toBe(0.75);
    expect(out["perf/prefill/transfer_speed_gb_s/mean"]).toBe(12);
    expect(out["perf/prefill/retry_count/max"]).toBe(1);
    expect(out["perf/decode/transfer_duration/mean"]).toBe(0.5);
  });

  it("counts streaming requests (sglang_generate_stream) and ignores requests still running", () => {
    const reqs = requests(trace({ name: "sglang_generate_stream", end: { e2e_latency: 4 } }), trace({ end: { e2e_latency: 1 }, open: true }));
    expect(reqs.map((r) => r.name)).toEqual(["sglang_generate_stream"]);
    expect(aggregatePerf(reqs)["perf/request/e2e_latency/mean"]).toBe(4);
  });

  it("no requests: only the counts", () => {
    expect(aggregatePerf([])).toEqual({ "perf/request/count": 0, "perf/request/profiled_count": 0 });
    expect(aggregatePerf([], false)).toEqual({});
    expect(parseTrace({ events: "x" })).toBeNull();
  });
});
