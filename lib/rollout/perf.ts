/**
 * Per-request SGLang timing and the per-step `perf/*` request metrics (docs/api.md 9.2
 * "derived metrics", docs/formats.md "sample trace"). Pure: input is a sample's `trace`
 * (slime's `{version, trace_id, …, events}`) as plain JSON, or the flat records of the
 * `dashboard/requests.jsonl` stream (miles); both become `RequestAttrs` and one
 * aggregation (`aggregatePerf`) computes the metrics from either source.
 *
 * Aggregation rule (slime's own, for the keys it logs): per field, mean / median / max /
 * min over the step's generation span ends (`sglang_generate`, and `sglang_generate_stream`
 * for streaming rollouts, which slime's aggregator misses); a value that is not a finite
 * number (missing, string, bool, NaN, ±inf) is skipped for that field only; a field with no
 * values gets no keys. The PD fields are read from the PD child spans (`sglang_pd_prefill*`,
 * `sglang_pd_decode*`) and the `sglang_pd_summary` event below the generation span, or —
 * the older layout — flat `pd_*` attrs on the span end itself (which win when both exist).
 * `perf/request/count` (generation span ends in the step) and `perf/request/profiled_count`
 * (those with at least one usable timing value) are added whenever the step has traces.
 */

import type { RequestRecord } from "@/lib/store/format";
import type { SampleTrace, StepTraces } from "@/lib/store/dumps/traces";

/** A trace event as recorded (`span_start` / `span_end` / `event`); tolerant of gaps. */
export interface TraceEvent {
  type: string;
  name: string;
  ts: number | null;
  span_id: string | null;
  parent_span_id: string | null;
  attrs: Record<string, unknown>;
}

/** One span: its start and end events joined by `span_id`. */
export interface TraceSpan {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  start: number | null;
  end: number | null;
  start_attrs: Record<string, unknown>;
  end_attrs: Record<string, unknown>;
}

/** A point event (`type: "event"`), attached to its parent span. */
export interface TracePoint {
  name: string;
  ts: number | null;
  parent_span_id: string | null;
  attrs: Record<string, unknown>;
}

export interface ParsedTrace {
  trace_id: string | null;
  sample_id: number | null;
  group_id: number | null;
  attempt: number | null;
  /** In order of their start (spans without a start event: of their end). */
  spans: TraceSpan[];
  points: TracePoint[];
}

/** Span names that are one SGLang call (the request spans). */
export const REQUEST_SPAN_NAMES: ReadonlySet<string> = new Set(["sglang_generate", "sglang_generate_stream"]);
export const PD_SPAN_PREFIX = "sglang_pd_";
export const PD_SUMMARY_EVENT = "sglang_pd_summary";

/** Each aggregated field: the metric key prefix and the attr (SGLang `meta_info` / PD name). */
export const PERF_FIELDS: readonly { key: string; attr: string }[] = [
  { key: "perf/request/e2e_latency", attr: "e2e_latency" },
  { key: "perf/request/queue_time", attr: "queue_time" },
  { key: "perf/decode/throughput", attr: "decode_throughput" },
  ...["bootstrap_queue", "bootstrap", "alloc_wait", "forward", "transfer_queue"].map((s) => ({
    key: `perf/prefill/${s}_duration`,
    attr: `pd_prefill_${s}_duration`,
  })),
  { key: "perf/prefill/transfer_speed_gb_s", attr: "pd_transfer_speed_gb_s" },
  { key: "perf/prefill/transfer_total_mb", attr: "pd_transfer_total_mb" },
  { key: "perf/prefill/retry_count", attr: "pd_prefill_retry_count" },
  ...["prealloc", "bootstrap", "alloc_wait", "transfer", "forward"].map((s) => ({
    key: `perf/decode/${s}_duration`,
    attr: `pd_decode_${s}_duration`,
  })),
];
export const PERF_STATS = ["max", "mean", "median", "min"] as const;
export const PERF_COUNT_KEY = "perf/request/count";
export const PERF_PROFILED_KEY = "perf/request/profiled_count";

/** Every key the perf family can answer (a closed set: never a trainer-logged `perf/*`). */
export const PERF_KEYS: ReadonlySet<string> = new Set([
  ...PERF_FIELDS.flatMap((f) => PERF_STATS.map((s) => `${f.key}/${s}`)),
  PERF_COUNT_KEY,
  PERF_PROFILED_KEY,
]);

function obj(v: unknown): Record<string, unknown> | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const int = (v: unknown): number | null => {
  const n = num(v);
  return n === null ? null : Math.trunc(n);
};

/** A finite number, else null (bools, strings, NaN and ±inf are not timing values). */
export function timingValue(v: unknown): number | null {
  if (typeof v === "bigint") return Number(v);
  return num(v);
}

/** Parse a sample's `trace` (plain JSON); null when it is not a trace. */
export function parseTrace(raw: unknown): ParsedTrace | null {
  const t = obj(raw);
  if (!t || !Array.isArray(t.events)) return null;
  const spans = new Map<string, TraceSpan>();
  const points: TracePoint[] = [];
  const span = (id: string, name: string): TraceSpan => {
    let s = spans.get(id);
    if (!s) spans.set(id, (s = { span_id: id, parent_span_id: null, name, start: null, end: null, start_attrs: {}, end_attrs: {} }));
    return s;
  };
  for (const e of t.events) {
    const ev = obj(e);
    if (!ev) continue;
    const name = str(ev.name) ?? "";
    const ts = num(ev.ts);
    const attrs = obj(ev.attrs) ?? {};
    const id = str(ev.span_id);
    const parent = str(ev.parent_span_id);
    if (ev.type === "event") {
      points.push({ name, ts, parent_span_id: parent ?? id, attrs });
    } else if ((ev.type === "span_start" || ev.type === "span_end") && id) {
      const s = span(id, name);
      if (parent) s.parent_span_id = parent;
      if (ev.type === "span_start") {
        s.start = ts;
        s.start_attrs = attrs;
        if (name) s.name = name;
      } else {
        s.end = ts;
        s.end_attrs = attrs;
      }
    }
  }
  const ordered = [...spans.values()].sort((a, b) => (a.start ?? a.end ?? 0) - (b.start ?? b.end ?? 0));
  return {
    trace_id: str(t.trace_id),
    sample_id: int(t.sample_id),
    group_id: int(t.group_id),
    attempt: int(t.attempt),
    spans: ordered,
    points,
  };
}

/** One SGLang call of a sample, with the attrs the metrics read (PD merged in). */
export interface RequestAttrs {
  span_id: string | null;
  name: string;
  start: number | null;
  end: number | null;
  /** Span-end attrs, with the PD children's and summary's attrs beneath them. */
  attrs: Record<string, unknown>;
}

/** The request spans of a trace that ended (a span without an end is still running). */
export function traceRequests(trace: ParsedTrace): RequestAttrs[] {
  const children = new Map<string, TraceSpan[]>();
  for (const s of trace.spans) {
    if (!s.parent_span_id) continue;
    let list = children.get(s.parent_span_id);
    if (!list) children.set(s.parent_span_id, (list = []));
    list.push(s);
  }
  const out: RequestAttrs[] = [];
  for (const s of trace.spans) {
    if (!REQUEST_SPAN_NAMES.has(s.name) || s.end === null) continue;
    const below = new Set<string>([s.span_id]);
    const pd: Record<string, unknown> = {};
    const walk = (id: string) => {
      for (const c of children.get(id) ?? []) {
        below.add(c.span_id);
        if (c.name.startsWith(PD_SPAN_PREFIX)) Object.assign(pd, c.end_attrs);
        walk(c.span_id);
      }
    };
    walk(s.span_id);
    for (const p of trace.points) if (p.name === PD_SUMMARY_EVENT && p.parent_span_id && below.has(p.parent_span_id)) Object.assign(pd, p.attrs);
    out.push({ span_id: s.span_id, name: s.name, start: s.start, end: s.end, attrs: { ...pd, ...s.end_attrs } });
  }
  return out;
}

function median(sorted: readonly number[]): number {
  const n = sorted.length;
  const mid = n >> 1;
  return n % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The `perf/*` request metrics of one step from its requests' attrs (the module comment
 * states the rule). `withCounts`: add count / profiled_count (false only for a step
 * that has no trace at all).
 */
export function aggregatePerf(requests: readonly { attrs: Record<string, unknown> }[], withCounts = true): Record<string, number> {
  const out: Record<string, number> = {};
  let profiled = 0;
  const values = PERF_FIELDS.map(() => [] as number[]);
  for (const r of requests) {
    let any = false;
    PERF_FIELDS.forEach((f, i) => {
      const v = timingValue(r.attrs[f.attr]);
      if (v === null) return;
      values[i]!.push(v);
      any = true;
    });
    if (any) profiled++;
  }
  PERF_FIELDS.forEach((f, i) => {
    const vs = values[i]!;
    if (!vs.length) return;
    const sorted = [...vs].sort((a, b) => a - b);
    let sum = 0;
    for (const v of vs) sum += v;
    out[`${f.key}/max`] = sorted[sorted.length - 1]!;
    out[`${f.key}/mean`] = sum / vs.length;
    out[`${f.key}/median`] = median(sorted);
    out[`${f.key}/min`] = sorted[0]!;
  });
  if (withCounts) {
    out[PERF_COUNT_KEY] = requests.length;
    out[PERF_PROFILED_KEY] = profiled;
  }
  return out;
}

/**
 * A rollout's request-stream records (miles: `dashboard/requests/`, docs/formats.md §4.14)
 * as the same per-sample traces slime writes: per sample a `generate_and_rm` span around
 * one `sglang_generate` span per call, whose end carries the call's `meta_info` (and the
 * engine) — so the metrics and the trace timeline have one code path for both sources.
 * A call's start is its `start_ts`, else its end minus `e2e_latency`.
 */
export function tracesFromRequests(records: readonly RequestRecord[], rolloutId: number, evaluation: boolean, file: string): StepTraces {
  const bySample = new Map<string, RequestRecord[]>();
  records.forEach((r, i) => {
    if (r.rollout_id !== rolloutId || r.evaluation !== evaluation) return;
    const k = r.sample_index === null ? `n${i}` : `s${r.sample_index}`;
    let list = bySample.get(k);
    if (!list) bySample.set(k, (list = []));
    list.push(r);
  });
  const samples: SampleTrace[] = [];
  let seq = 0;
  for (const list of bySample.values()) {
    const first = list[0]!;
    const root = `req-${rolloutId}-${seq++}`;
    const calls = list.map((r) => {
      const e2e = timingValue(r.meta_info.e2e_latency);
      const start = r.start_ts ?? (e2e !== null ? r.ts - e2e : r.ts);
      const attrs: Record<string, unknown> = { ...r.meta_info, engine: r.engine };
      const fr = r.meta_info.finish_reason;
      if (typeof fr === "object" && fr !== null && typeof fr.type === "string") attrs.finish_reason = fr.type;
      return { r, start, attrs };
    });
    const t0 = Math.min(...calls.map((c) => c.start));
    const t1 = Math.max(...calls.map((c) => c.r.ts));
    const events: Record<string, unknown>[] = [{ type: "span_start", name: "generate_and_rm", ts: t0, span_id: root }];
    for (const c of calls.sort((a, b) => a.start - b.start)) {
      const id = `${root}-${seq++}`;
      events.push({ type: "span_start", name: "sglang_generate", ts: c.start, span_id: id, parent_span_id: root });
      events.push({ type: "span_end", name: "sglang_generate", ts: c.r.ts, span_id: id, attrs: c.attrs });
    }
    events.push({ type: "span_end", name: "generate_and_rm", ts: t1, span_id: root });
    let cached: number | null = null;
    for (const c of calls) {
      const v = timingValue(c.r.meta_info.cached_tokens);
      if (v !== null) cached = (cached ?? 0) + v;
    }
    samples.push({
      sample_index: first.sample_index,
      group_index: first.group_index,
      status: null,
      response_length: null,
      cached_tokens: cached,
      total_prompt_tokens: null,
      trace: { version: 1, trace_id: null, sample_id: first.sample_index, group_id: first.group_index, attempt: null, events },
    });
  }
  return { rollout_id: rolloutId, evaluation, file, has_traces: samples.length > 0, samples };
}
