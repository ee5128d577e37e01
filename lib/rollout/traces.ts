/**
 * The trace timeline's endpoints (docs/api.md 9.2 `/traces`, `/sample/{idx}/trace`): a
 * step's per-sample traces as swimlane rows on one time axis, and one sample's trace as
 * nested spans with the PD breakdown tagged as `[P]` / `[D]` virtual lanes, point events,
 * and one request card per SGLang call (queue → prefill → decode summing to the e2e
 * latency). Pure over `StepTraces` (lib/store/dumps/traces.ts), which come from the rollout
 * dump (slime) or from the requests stream (miles).
 */
import { notFound } from "@/lib/contracts/errors";
import type { StepTraces } from "@/lib/store/dumps/traces";
import { REQUESTS_DIR, requestsFileName } from "@/lib/store/format";
import { readStepRequests, type MetricStore } from "@/lib/store/telemetry";
import { parseTrace, PD_SPAN_PREFIX, REQUEST_SPAN_NAMES, timingValue, traceRequests, tracesFromRequests, type ParsedTrace, type RequestAttrs } from "./perf";

export type SpanKind = "group" | "sample" | "generate" | "reward" | "tool" | "pd_prefill" | "pd_decode" | "other";

export function spanKind(name: string): SpanKind {
  if (name === "generate_and_rm_group") return "group";
  if (name === "generate_and_rm") return "sample";
  if (REQUEST_SPAN_NAMES.has(name)) return "generate";
  if (name === "reward_model" || name.startsWith("reward")) return "reward";
  if (name.startsWith(`${PD_SPAN_PREFIX}prefill`)) return "pd_prefill";
  if (name.startsWith(`${PD_SPAN_PREFIX}decode`)) return "pd_decode";
  if (name.startsWith("tool") || name.includes("tool_call") || name.startsWith("env")) return "tool";
  return "other";
}

export interface TraceSpanOut {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: SpanKind;
  /** Nesting depth (0 = a root span); PD spans keep their tree depth. */
  depth: number;
  /** "P" / "D": the span belongs to the prefill / decode virtual lane of its generation. */
  lane: "P" | "D" | null;
  /** The generation span a PD span belongs to. */
  request_span_id: string | null;
  start: number | null;
  end: number | null;
  /** Start attrs, then end attrs (an end attr of the same name wins). */
  attrs: Record<string, unknown>;
}

export interface TraceEventOut {
  name: string;
  ts: number | null;
  parent_span_id: string | null;
  attrs: Record<string, unknown>;
}

export interface RequestSegment {
  phase: "queue" | "prefill" | "decode";
  seconds: number;
  /** How the value was obtained: measured by SGLang, or the rest of the e2e latency. */
  source: "measured" | "remainder";
  /** The PD segments of this phase as measured (may overlap other phases). */
  parts: { name: string; seconds: number }[];
}

export interface RequestCard {
  span_id: string | null;
  name: string;
  engine: string | null;
  start: number | null;
  end: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  finish_reason: string | null;
  e2e_latency: number | null;
  queue_time: number | null;
  decode_throughput: number | null;
  pd: boolean;
  /** queue → prefill → decode; sums to e2e_latency when it is set ([] when it cannot be split). */
  segments: RequestSegment[];
  attrs: Record<string, unknown>;
}

const PREFILL_PARTS = ["bootstrap_queue", "bootstrap", "alloc_wait", "forward", "transfer_queue"];
const DECODE_PARTS = ["prealloc", "bootstrap", "alloc_wait", "transfer", "forward"];
const ENGINE_ATTRS = ["engine", "engine_url", "server_url", "worker_url", "url"];

function parts(attrs: Record<string, unknown>, side: "prefill" | "decode", names: readonly string[]) {
  const out: { name: string; seconds: number }[] = [];
  for (const n of names) {
    const v = timingValue(attrs[`pd_${side}_${n}_duration`]);
    if (v !== null) out.push({ name: n, seconds: v });
  }
  return out;
}

/** One request's card from its merged attrs (span end + PD children, or a stream record). */
export function requestCard(r: RequestAttrs): RequestCard {
  const a = r.attrs;
  const e2e = timingValue(a.e2e_latency);
  const queue = timingValue(a.queue_time);
  const thr = timingValue(a.decode_throughput);
  const completion = timingValue(a.completion_tokens);
  const prefillParts = parts(a, "prefill", PREFILL_PARTS);
  const decodeParts = parts(a, "decode", DECODE_PARTS);
  const pd = prefillParts.length > 0 || decodeParts.length > 0;
  // Decode time: the PD decode forward when measured, else completion tokens / throughput.
  const pdForward = timingValue(a.pd_decode_forward_duration);
  const decode = pdForward ?? (completion !== null && thr !== null && thr > 0 ? completion / thr : null);
  const segments: RequestSegment[] = [];
  if (e2e !== null && queue !== null && decode !== null) {
    segments.push({ phase: "queue", seconds: queue, source: "measured", parts: [] });
    segments.push({ phase: "prefill", seconds: e2e - queue - decode, source: "remainder", parts: prefillParts });
    segments.push({ phase: "decode", seconds: decode, source: "measured", parts: decodeParts });
  }
  let engine: string | null = null;
  for (const k of ENGINE_ATTRS) if (typeof a[k] === "string") {
    engine = a[k];
    break;
  }
  const int = (v: unknown) => timingValue(v);
  return {
    span_id: r.span_id,
    name: r.name,
    engine,
    start: r.start,
    end: r.end,
    prompt_tokens: int(a.prompt_tokens),
    completion_tokens: completion,
    cached_tokens: int(a.cached_tokens),
    finish_reason: typeof a.finish_reason === "string" ? a.finish_reason : null,
    e2e_latency: e2e,
    queue_time: queue,
    decode_throughput: thr,
    pd,
    segments,
    attrs: a,
  };
}

function spansOut(trace: ParsedTrace): TraceSpanOut[] {
  const byId = new Map(trace.spans.map((s) => [s.span_id, s]));
  const depthOf = new Map<string, number>();
  const depth = (id: string, seen = 0): number => {
    const hit = depthOf.get(id);
    if (hit !== undefined) return hit;
    const p = byId.get(id)?.parent_span_id;
    const d = p && byId.has(p) && seen < 64 ? depth(p, seen + 1) + 1 : 0;
    depthOf.set(id, d);
    return d;
  };
  const requestOf = (id: string): string | null => {
    let cur = byId.get(id);
    for (let i = 0; cur && i < 64; i++) {
      if (REQUEST_SPAN_NAMES.has(cur.name)) return cur.span_id;
      cur = cur.parent_span_id ? byId.get(cur.parent_span_id) : undefined;
    }
    return null;
  };
  return trace.spans.map((s) => {
    const kind = spanKind(s.name);
    const lane = kind === "pd_prefill" ? "P" : kind === "pd_decode" ? "D" : null;
    return {
      span_id: s.span_id,
      parent_span_id: s.parent_span_id,
      name: s.name,
      kind,
      depth: depth(s.span_id),
      lane,
      request_span_id: lane ? requestOf(s.span_id) : null,
      start: s.start,
      end: s.end,
      attrs: { ...s.start_attrs, ...s.end_attrs },
    };
  });
}

function bounds(spans: readonly { start: number | null; end: number | null }[], points: readonly { ts: number | null }[] = []) {
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const s of spans) {
    for (const t of [s.start, s.end]) {
      if (t === null) continue;
      if (t < t0) t0 = t;
      if (t > t1) t1 = t;
    }
  }
  for (const p of points) if (p.ts !== null) {
    if (p.ts < t0) t0 = p.ts;
    if (p.ts > t1) t1 = p.ts;
  }
  return Number.isFinite(t0) ? { t0, t1 } : { t0: null, t1: null };
}

export interface SampleTraceAnswer {
  rollout_id: number;
  evaluation: boolean;
  sample_index: number;
  group_index: number | null;
  trace_id: string | null;
  attempt: number | null;
  t0: number | null;
  t1: number | null;
  spans: TraceSpanOut[];
  events: TraceEventOut[];
  requests: RequestCard[];
}

/** `/sample/{idx}/trace`: 404 when the sample is not in the step or carries no trace. */
export function sampleTrace(step: StepTraces, sampleIndex: number): SampleTraceAnswer {
  const s = step.samples.find((x) => x.sample_index === sampleIndex);
  if (!s) throw notFound(`unknown sample_index ${sampleIndex} in rollout ${step.rollout_id}`);
  const trace = parseTrace(s.trace);
  if (!trace) throw notFound(`sample ${sampleIndex} of rollout ${step.rollout_id} carries no request trace (${step.file})`);
  const spans = spansOut(trace);
  const events = trace.points.map((p) => ({ name: p.name, ts: p.ts, parent_span_id: p.parent_span_id, attrs: p.attrs }));
  return {
    rollout_id: step.rollout_id,
    evaluation: step.evaluation,
    sample_index: sampleIndex,
    group_index: s.group_index,
    trace_id: trace.trace_id,
    attempt: trace.attempt,
    ...bounds(spans, events),
    spans,
    events,
    requests: traceRequests(trace).map(requestCard),
  };
}

export interface TraceRowSpan {
  name: string;
  kind: SpanKind;
  start: number;
  end: number;
}

export interface TraceRow {
  sample_index: number | null;
  group_index: number | null;
  status: string | null;
  start: number | null;
  end: number | null;
  requests: number;
  /** Sums over the sample's requests (null when no request has the value). */
  e2e_latency: number | null;
  queue_time: number | null;
  cached_tokens: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Spans with a start and an end, PD segments left out (their parents stay). */
  spans: TraceRowSpan[];
}

export interface StepTracesAnswer {
  rollout_id: number;
  evaluation: boolean;
  t0: number | null;
  t1: number | null;
  rows: TraceRow[];
}

function sum(cards: readonly RequestCard[], pick: (c: RequestCard) => number | null): number | null {
  let total: number | null = null;
  for (const c of cards) {
    const v = pick(c);
    if (v !== null) total = (total ?? 0) + v;
  }
  return total;
}

/** `/traces`: one swimlane row per sample, in dump order (404 when no sample has a trace). */
export function stepTraceRows(step: StepTraces): StepTracesAnswer {
  if (!step.has_traces) throw notFound(`rollout ${step.rollout_id} carries no request traces (${step.file})`);
  const rows: TraceRow[] = step.samples.map((s) => {
    const trace = parseTrace(s.trace);
    const cards = trace ? traceRequests(trace).map(requestCard) : [];
    const spans: TraceRowSpan[] = [];
    for (const sp of trace?.spans ?? []) {
      if (sp.start === null || sp.end === null) continue;
      const kind = spanKind(sp.name);
      if ((kind === "pd_prefill" && sp.name !== `${PD_SPAN_PREFIX}prefill`) || (kind === "pd_decode" && sp.name !== `${PD_SPAN_PREFIX}decode`)) continue;
      spans.push({ name: sp.name, kind, start: sp.start, end: sp.end });
    }
    const b = bounds(spans);
    return {
      sample_index: s.sample_index,
      group_index: s.group_index,
      status: s.status,
      start: b.t0,
      end: b.t1,
      requests: cards.length,
      e2e_latency: sum(cards, (c) => c.e2e_latency),
      queue_time: sum(cards, (c) => c.queue_time),
      cached_tokens: sum(cards, (c) => c.cached_tokens) ?? s.cached_tokens,
      prompt_tokens: sum(cards, (c) => c.prompt_tokens),
      completion_tokens: sum(cards, (c) => c.completion_tokens),
      spans,
    };
  });
  let t0: number | null = null;
  let t1: number | null = null;
  for (const r of rows) {
    if (r.start !== null && (t0 === null || r.start < t0)) t0 = r.start;
    if (r.end !== null && (t1 === null || r.end > t1)) t1 = r.end;
  }
  return { rollout_id: step.rollout_id, evaluation: step.evaluation, t0, t1, rows };
}

/** What the endpoints need from the run: its dump reader and its telemetry store. */
export interface TraceRun {
  dumps: {
    sampleTraces(rolloutId: number, evaluation: boolean): Promise<StepTraces>;
    listRolloutIds?(): Promise<{ train: number[]; eval: number[] }>;
    traceDigest?<T>(rolloutId: number, name: string, derive: (t: StepTraces) => T): Promise<T>;
  };
  store: Pick<MetricStore, "fs">;
}

/**
 * False when the run's first train dump carries no trace (a miles run): its other dumps
 * are then not parsed for traces (answered once per dump version, cached by the reader).
 */
async function dumpsMayHaveTraces(dumps: TraceRun["dumps"], rolloutId: number, evaluation: boolean): Promise<boolean> {
  if (!dumps.traceDigest || !dumps.listRolloutIds) return true;
  try {
    const first = (await dumps.listRolloutIds()).train[0];
    if (first === undefined || (first === rolloutId && !evaluation)) return true;
    return await dumps.traceDigest(first, "has_traces", (t) => t.has_traces);
  } catch {
    return true;
  }
}

/**
 * A step's traces: the rollout dump's (slime) when it carries any, else the step's records
 * of the requests stream (miles, docs/formats.md §4.14) as the same traces; a dump error
 * stands when neither has any.
 */
export async function loadStepTraces(run: TraceRun, rolloutId: number, evaluation: boolean): Promise<StepTraces> {
  let fromDump: StepTraces | null = null;
  let dumpError: unknown = null;
  const tryDump = await dumpsMayHaveTraces(run.dumps, rolloutId, evaluation);
  if (tryDump) {
    try {
      fromDump = await run.dumps.sampleTraces(rolloutId, evaluation);
    } catch (err) {
      dumpError = err;
    }
  }
  if (fromDump?.has_traces) return fromDump;
  const records = await readStepRequests(run.store.fs, rolloutId, evaluation);
  if (records.length) return tracesFromRequests(records, rolloutId, evaluation, `${REQUESTS_DIR}/${requestsFileName(rolloutId, evaluation)}`);
  if (fromDump) return fromDump;
  if (!tryDump) throw notFound(`rollout ${rolloutId} carries no request traces (the run's dumps have none and ${REQUESTS_DIR}/ has no records for it)`);
  throw dumpError;
}

export async function getStepTraces(run: TraceRun, rolloutId: number, evaluation: boolean): Promise<StepTracesAnswer> {
  return stepTraceRows(await loadStepTraces(run, rolloutId, evaluation));
}

export async function getSampleTrace(run: TraceRun, rolloutId: number, sampleIndex: number, evaluation: boolean): Promise<SampleTraceAnswer> {
  return sampleTrace(await loadStepTraces(run, rolloutId, evaluation), sampleIndex);
}
