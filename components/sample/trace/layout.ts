/**
 * Rows of the Sample view's trace timeline (docs/views.md 6 "trace"): one row per span in
 * tree order (children below their parent, by start), and under each generation span two
 * virtual lanes, `[P]` (the prefill side's spans) and `[D]` (the decode side's), holding
 * the PD spans of that request as segments on one line. Point events sit on their parent
 * span's row. Times are seconds from the trace's first timestamp.
 */
import type { GetSampleTraceResponse, TraceEvent, TraceSpan } from "@/lib/contracts/traces";

export interface TraceBar {
  span: TraceSpan;
  /** Seconds from t0; an unfinished span runs to the trace's end. */
  x0: number;
  x1: number;
  open: boolean;
  /** A lane's parent span (sglang_pd_prefill / sglang_pd_decode) is drawn behind its segments. */
  back: boolean;
}

export interface TraceMark {
  event: TraceEvent;
  x: number;
}

export interface TraceLayoutRow {
  key: string;
  label: string;
  depth: number;
  lane: "P" | "D" | null;
  bars: TraceBar[];
  marks: TraceMark[];
}

export interface TraceLayout {
  t0: number;
  span: number;
  rows: TraceLayoutRow[];
}

export function layoutTrace(t: GetSampleTraceResponse): TraceLayout {
  const t0 = t.t0 ?? 0;
  const span = Math.max(1e-6, (t.t1 ?? t0) - t0);
  const bar = (s: TraceSpan, back = false): TraceBar => ({
    span: s,
    x0: (s.start ?? s.end ?? t0) - t0,
    x1: (s.end ?? t.t1 ?? t0) - t0,
    open: s.end === null,
    back,
  });
  const ids = new Set(t.spans.map((s) => s.span_id));
  const children = new Map<string | null, TraceSpan[]>();
  const lanes = new Map<string, TraceSpan[]>();
  for (const s of t.spans) {
    if (s.lane) {
      const k = `${s.request_span_id ?? ""}\u0000${s.lane}`;
      lanes.set(k, [...(lanes.get(k) ?? []), s]);
      continue;
    }
    const p = s.parent_span_id && ids.has(s.parent_span_id) ? s.parent_span_id : null;
    children.set(p, [...(children.get(p) ?? []), s]);
  }
  const marksOf = new Map<string, TraceMark[]>();
  const laneOfSpan = new Map<string, string>();
  for (const [k, list] of lanes) for (const s of list) laneOfSpan.set(s.span_id, k);
  for (const e of t.events) {
    if (e.ts === null) continue;
    const parent = e.parent_span_id ?? "";
    const key = laneOfSpan.get(parent) ?? parent;
    marksOf.set(key, [...(marksOf.get(key) ?? []), { event: e, x: e.ts - t0 }]);
  }
  const rows: TraceLayoutRow[] = [];
  const byStart = (a: TraceSpan, b: TraceSpan) => (a.start ?? a.end ?? 0) - (b.start ?? b.end ?? 0);
  const visit = (s: TraceSpan, depth: number) => {
    rows.push({ key: s.span_id, label: s.name, depth, lane: null, bars: [bar(s)], marks: marksOf.get(s.span_id) ?? [] });
    for (const lane of ["P", "D"] as const) {
      const list = lanes.get(`${s.span_id}\u0000${lane}`);
      if (!list) continue;
      const k = `${s.span_id}\u0000${lane}`;
      // the lane's top span (sglang_pd_prefill / _decode) behind, its segments in front
      const minDepth = Math.min(...list.map((x) => x.depth));
      const bars = [...list].sort(byStart).map((x) => bar(x, x.depth === minDepth && list.length > 1));
      bars.sort((a, b) => Number(b.back) - Number(a.back));
      rows.push({ key: k, label: `[${lane}]`, depth: depth + 1, lane, bars, marks: marksOf.get(k) ?? [] });
    }
    for (const c of (children.get(s.span_id) ?? []).sort(byStart)) visit(c, depth + 1);
  };
  for (const r of (children.get(null) ?? []).sort(byStart)) visit(r, 0);
  // PD spans whose generation span is missing still show, on their own lanes.
  for (const [k, list] of lanes) {
    const [req, lane] = k.split("\u0000") as [string, "P" | "D"];
    if (req && ids.has(req) && t.spans.some((s) => s.span_id === req && !s.lane)) continue;
    rows.push({ key: k, label: `[${lane}]`, depth: 0, lane, bars: list.map((x) => bar(x)), marks: [] });
  }
  return { t0, span, rows };
}

/** Every attr of a span or event as `key = value` lines (the hover). */
export function attrLines(attrs: Record<string, unknown>): [string, string][] {
  return Object.entries(attrs).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v) ?? String(v)]);
}
