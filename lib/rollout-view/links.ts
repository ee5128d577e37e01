/**
 * Links between the views (issue #16 part 4, docs/views.md 3.13, 4.7, 6.5), each a URL a
 * person can share: a step → its window on the Compute Utilization view, a sample → its
 * generation spans on the lanes, a timeline window → the steps and samples generated in
 * it, a step or sample → the Metrics view's step cursor. Pure: the views feed it what their
 * queries answered (bubbles, trajectories, the sample's request trace).
 *
 * Windows are encoded the way the timeline view reads them (`v=<t0>~<t1>`, `step=`, `lanes=`;
 * lib/charts/timeline-url.ts), so the link opens exactly that window.
 */
import type { Bubble } from "@/lib/charts/api-shapes";
import { encodeRange, readableQuery } from "@/lib/charts/core/url";
import { prepareSteps } from "@/lib/charts/prepare-bubbles";

export interface TimeWindow {
  t0: number;
  t1: number;
}

/** The timeline's widest window (docs/api.md 9.1 `max_window_s`). */
export const MAX_WINDOW_S = 14400;

/** Minimal trajectory lane (docs/api.md 8.12) the links read. */
export interface LinkLane {
  sample_index: number;
  first_ts: number;
  last_ts: number;
  segments: readonly { kind: string; t0: number | null; t1: number | null; turn: number }[];
}

/** Minimal request card (docs/api.md 9.2 sample trace) the links read. */
export interface LinkRequest {
  engine: string | null;
  start: number | null;
  end: number | null;
}

const runBase = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/**
 * The window shown for a span of activity: 5 % of its length (at least 1 s) on each side,
 * so its edges are visible, and never wider than the timeline allows (kept around the
 * span's centre).
 */
export function padWindow(w: TimeWindow, maxWindow = MAX_WINDOW_S): TimeWindow {
  const len = Math.max(0, w.t1 - w.t0);
  const pad = Math.max(1, len * 0.05);
  let t0 = w.t0 - pad;
  let t1 = w.t1 + pad;
  if (t1 - t0 > maxWindow) {
    const c = (w.t0 + w.t1) / 2;
    t0 = c - maxWindow / 2;
    t1 = c + maxWindow / 2;
  }
  return { t0, t1 };
}

/** `/runs/{id}/timeline?v=…` for a window (padded), with the step picked and a lane selection. */
export function timelineHref(runId: string, w: TimeWindow, opts: { step?: number | null; lanes?: string | null; pad?: boolean } = {}): string {
  const win = opts.pad === false ? w : padWindow(w);
  const q = new URLSearchParams();
  if (opts.lanes) q.set("lanes", opts.lanes);
  q.set("v", encodeRange([win.t0, win.t1]) as string);
  if (opts.step !== null && opts.step !== undefined) q.set("step", String(opts.step));
  return `${runBase(runId)}/timeline?${readableQuery(q)}`;
}

/** The Metrics view with its step cursor on `step` (lib/charts/metrics-url.ts `step=`). */
export function metricsHref(runId: string, step: number): string {
  return `${runBase(runId)}/metrics?step=${step}`;
}

export type StepWindowSource = "step time" | "trajectories";

/**
 * A step's time window: its span on the step strip (`[ts − step_time, ts]` of its bubble,
 * lib/charts/prepare-bubbles.ts) — the phases of that step — else, without step timing,
 * from the step's trajectories (first sample submitted → consumed).
 */
export function stepWindow(
  step: number,
  bubbles: readonly Bubble[] | null | undefined,
  traj: { lanes: readonly LinkLane[]; consume_ts: number | null } | null | undefined,
): { window: TimeWindow; source: StepWindowSource } | null {
  const s = bubbles ? prepareSteps(bubbles).find((x) => x.step === step) : undefined;
  if (s && s.t1 > s.t0) return { window: { t0: s.t0, t1: s.t1 }, source: "step time" };
  if (traj && traj.lanes.length) {
    let t0 = Infinity;
    let t1 = -Infinity;
    for (const l of traj.lanes) {
      if (Number.isFinite(l.first_ts)) t0 = Math.min(t0, l.first_ts);
      if (Number.isFinite(l.last_ts)) t1 = Math.max(t1, l.last_ts);
    }
    if (traj.consume_ts !== null && Number.isFinite(traj.consume_ts)) t1 = Math.max(t1, traj.consume_ts);
    if (Number.isFinite(t0) && t1 > t0) return { window: { t0, t1 }, source: "trajectories" };
  }
  return null;
}

export interface GenSpan {
  t0: number;
  t1: number;
  turn: number | null;
  engine: string | null;
}

/**
 * A sample's generation spans: its trajectory lane's `gen` segments with both ends, else its
 * request trace's SGLang calls (which also name the engine).
 */
export function sampleGenSpans(lane: LinkLane | null | undefined, requests: readonly LinkRequest[] | null | undefined): GenSpan[] {
  const out: GenSpan[] = [];
  if (lane) {
    for (const s of lane.segments) {
      if (s.kind === "gen" && s.t0 !== null && s.t1 !== null && s.t1 >= s.t0) out.push({ t0: s.t0, t1: s.t1, turn: s.turn > 0 ? s.turn : null, engine: null });
    }
  }
  if (out.length === 0 && requests) {
    for (const r of requests) if (r.start !== null && r.end !== null && r.end >= r.start) out.push({ t0: r.start, t1: r.end, turn: null, engine: r.engine });
  }
  return out.sort((a, b) => a.t0 - b.t0);
}

/** Distinct engines the sample's requests name, in first-seen order. */
export function sampleEngines(requests: readonly LinkRequest[] | null | undefined): string[] {
  const seen: string[] = [];
  for (const r of requests ?? []) if (r.engine && !seen.includes(r.engine)) seen.push(r.engine);
  return seen;
}

/** Lane selection for engines (docs/views.md 3.3.1 `engine:<substr>`). */
export function engineLanes(engines: readonly string[]): string | null {
  return engines.length ? engines.map((e) => `engine:${e}`).join(",") : null;
}

/** The window covering spans (null without any). */
export function spansWindow(spans: readonly GenSpan[]): TimeWindow | null {
  if (spans.length === 0) return null;
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const s of spans) {
    t0 = Math.min(t0, s.t0);
    t1 = Math.max(t1, s.t1);
  }
  return { t0, t1 };
}

/** Samples of a step whose generation overlaps [v0, v1], by sample index. */
export function samplesGeneratingIn(lanes: readonly LinkLane[], v0: number, v1: number): number[] {
  const out: number[] = [];
  for (const l of lanes) {
    if (l.segments.some((s) => s.kind === "gen" && s.t0 !== null && (s.t1 ?? l.last_ts) >= v0 && s.t0 <= v1)) out.push(l.sample_index);
  }
  return out.sort((a, b) => a - b);
}

/**
 * Steps whose samples may have been generated in a window: the steps in view and, because
 * an async trainer consumes rollouts generated during earlier steps, the next `ahead` train
 * steps after the last one in view; at most `cap`.
 */
export function candidateSteps(inView: readonly number[], trainIds: readonly number[], ahead = 2, cap = 6): number[] {
  const ids = [...trainIds].sort((a, b) => a - b);
  const out = new Set<number>(inView.filter((s) => ids.includes(s)));
  const last = inView.length ? Math.max(...inView) : null;
  if (last !== null) for (const s of ids.filter((x) => x > last).slice(0, ahead)) out.add(s);
  return [...out].sort((a, b) => a - b).slice(0, cap);
}
