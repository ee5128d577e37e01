/**
 * Batch anatomy (docs/views.md 5): per-sample swimlanes of generate / tool-wait / queue
 * time for one step, coloured by weight version, with the step's consume marker.
 * Everything here is pure: layout, ordering, zoom/pan arithmetic, hit-testing and
 * tooltip text. Times in the model are seconds relative to T0.
 */
import { formatElapsed, formatValue } from "@/lib/charts/core/format";
import type { Cell, TrajectoriesResponse, TrajectoryLane } from "./types";

export const TOOL_COLOR = "#1baf7a";
export const CONSUME_COLOR = "#2a78d6";

/** The weight-version ring: v0 is green (hue 160); 25° per version over a 320° ring that skips the tool/amber hues. */
export function versionColor(v: number): string {
  const k = (((105 + 25 * v) % 320) + 320) % 320;
  return `hsl(${55 + k}, 69%, 37%)`;
}

export type AnatomySort = "submit" | "staleness" | "span" | "reward" | "turns";
export const ANATOMY_SORTS: { key: AnatomySort; label: string; hint: string }[] = [
  { key: "submit", label: "submit", hint: "first event first" },
  { key: "staleness", label: "staleness", hint: "widest weight-version span first" },
  { key: "span", label: "wall span", hint: "longest wall-clock span first" },
  { key: "reward", label: "reward", hint: "highest reward first" },
  { key: "turns", label: "turns", hint: "most turns first" },
];
export const isAnatomySort = (s: string | null): s is AnatomySort => ANATOMY_SORTS.some((o) => o.key === s);

/** Per-sample facts from the summary, shown at the row's right and used for sorting. */
export interface LaneFacts {
  turns?: Cell;
  toolCalls?: Cell;
  reward?: Cell;
}

export interface AnatomySpan {
  a: number;
  b: number;
}
export interface AnatomySegment extends AnatomySpan {
  kind: "gen" | "tool";
  turn: number;
  version: number | null;
  color: string;
  /** An end was missing (open or clipped) and is drawn to the window edge. */
  open: boolean;
}
export interface AnatomyRow {
  sampleIndex: number;
  groupIndex: number | null;
  label: string;
  info: string;
  status: string;
  versions: number[];
  first: number;
  last: number;
  attempts: AnatomySpan[];
  segments: AnatomySegment[];
}
export interface AnatomyModel {
  /** Absolute T0 (unix seconds); row times are relative to it. */
  t0: number;
  /** T1 − T0 in seconds (≥ 1). */
  span: number;
  consume: number | null;
  rows: AnatomyRow[];
  /** Distinct weight versions drawn, for the legend. */
  versions: number[];
}

const num = (v: Cell | undefined): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const versionOf = (s: string): number | null => (/^\d+$/.test(s) ? Number(s) : null);

function sortValue(l: TrajectoryLane, key: AnatomySort, facts: LaneFacts | undefined): number {
  switch (key) {
    case "staleness":
      return -((l.versions.at(-1) ?? 0) - (l.versions[0] ?? 0));
    case "span":
      return -(l.last_ts - l.first_ts);
    case "reward":
      return -(num(facts?.reward) ?? -Infinity);
    case "turns":
      return -(num(facts?.turns) ?? new Set(l.segments.filter((s) => s.kind !== "tool").map((s) => s.turn)).size);
    default:
      return 0;
  }
}

export function prepareAnatomy(resp: TrajectoriesResponse, sort: AnatomySort = "submit", facts?: ReadonlyMap<number, LaneFacts>): AnatomyModel | null {
  const lanes = resp.lanes;
  if (!lanes.length) return null;
  let t0 = Infinity;
  let maxLast = -Infinity;
  for (const l of lanes) {
    t0 = Math.min(t0, l.first_ts);
    maxLast = Math.max(maxLast, l.last_ts);
  }
  const t1 = Math.max(resp.consume_ts ?? maxLast, maxLast);
  const span = Math.max(1, t1 - t0);
  const rel = (t: number | null, fallback: number) => (t === null ? fallback : t - t0);
  const versions = new Set<number>();
  const ordered = lanes
    .map((l, i) => ({ l, i, key: sortValue(l, sort, facts?.get(l.sample_index)) }))
    .sort((a, b) => a.key - b.key || a.l.first_ts - b.l.first_ts || a.i - b.i);
  const rows = ordered.map(({ l }): AnatomyRow => {
    const f = facts?.get(l.sample_index);
    const info: string[] = [];
    if (num(f?.turns) !== null) info.push(`${num(f?.turns)}t`);
    if (num(f?.toolCalls) !== null) info.push(`${num(f?.toolCalls)}x`);
    if (f?.reward !== undefined && f.reward !== null) info.push(`r=${formatValue(f.reward)}`);
    const fallbackV = l.versions[0] ?? 0;
    return {
      sampleIndex: l.sample_index,
      groupIndex: l.group_index,
      label: `s${l.sample_index}`,
      info: info.join("·"),
      status: l.status,
      versions: l.versions,
      first: l.first_ts - t0,
      last: l.last_ts - t0,
      attempts: l.attempts.map((a) => ({ a: rel(a.t0, 0), b: rel(a.t1, span) })),
      segments: l.segments.map((s) => {
        const kind = s.kind === "tool" ? "tool" : "gen";
        const v = kind === "gen" ? (versionOf(s.weight_version) ?? fallbackV) : versionOf(s.weight_version);
        if (kind === "gen" && v !== null) versions.add(v);
        return {
          kind,
          turn: s.turn,
          version: v,
          a: rel(s.t0, 0),
          b: rel(s.t1, span),
          open: s.t0 === null || s.t1 === null,
          color: kind === "tool" ? TOOL_COLOR : versionColor(v ?? 0),
        };
      }),
    };
  });
  return {
    t0,
    span,
    consume: resp.consume_ts === null ? null : resp.consume_ts - t0,
    rows,
    versions: [...versions].sort((a, b) => a - b),
  };
}

export interface AnatomyDensity {
  detailed: boolean;
  rowH: number;
  left: number;
  right: number;
  labelEvery: number;
  attemptInset: number;
  segInset: number;
  top: number;
  height: number;
}

/** Detailed rows (≤ 48 lanes) with per-row info, else compressed rows. */
/** Row labels of the compact layout are 10 px text: this far apart they never touch. */
export const MIN_LABEL_GAP_PX = 12;

export function anatomyDensity(n: number): AnatomyDensity {
  const detailed = n <= 48;
  const rowH = detailed ? 13 : n <= 512 ? 4 : 2;
  const top = 18;
  return {
    detailed,
    rowH,
    left: detailed ? 96 : 64,
    right: detailed ? 96 : 14,
    // at most ~40 labels, and never closer than a label's height (64 rows of 4 px overprinted: #15 defect 11)
    labelEvery: detailed ? 1 : Math.max(Math.ceil(n / 40), Math.ceil(MIN_LABEL_GAP_PX / rowH)),
    attemptInset: detailed ? 4 : rowH === 2 ? 0 : 1,
    segInset: detailed ? 2 : rowH === 2 ? 0 : 0.75,
    top,
    height: top + n * rowH + 6,
  };
}

const TICK_STEPS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** Time ticks (relative seconds) for a view: the first step giving ≤ 8 ticks. */
export function timeTicks(view: readonly [number, number]): { step: number; ticks: number[] } {
  const w = view[1] - view[0];
  const step = TICK_STEPS.find((s) => w / s <= 8) ?? 7200;
  const ticks: number[] = [];
  for (let t = Math.ceil(view[0] / step) * step; t <= view[1] + 1e-9; t += step) ticks.push(t);
  return { step, ticks };
}

export type View = readonly [number, number];
const MIN_SPAN = 1;

function clampView(a: number, b: number, span: number): View {
  let w = Math.max(MIN_SPAN, Math.min(b - a, span));
  if (w > span) w = span;
  let lo = Math.max(0, Math.min(a, span - w));
  if (!Number.isFinite(lo)) lo = 0;
  return [lo, lo + w];
}

/** Wheel zoom around the time under the cursor; factor exp(deltaY × 0.002). */
export function zoomView(view: View, at: number, deltaY: number, span: number): View {
  const f = Math.exp(deltaY * 0.002);
  const a = at - (at - view[0]) * f;
  const b = at + (view[1] - at) * f;
  return clampView(a, b, span);
}

export function panView(view: View, dt: number, span: number): View {
  return clampView(view[0] + dt, view[1] + dt, span);
}

export function isFullView(view: View, span: number): boolean {
  return view[0] <= 1e-9 && view[1] >= span - 1e-9;
}

/** The segment under time t (segments drawn later win), else null. */
export function segmentAt(row: AnatomyRow, t: number): AnatomySegment | null {
  for (let i = row.segments.length - 1; i >= 0; i--) {
    const s = row.segments[i]!;
    if (t >= s.a && t <= s.b) return s;
  }
  return null;
}

/** Tooltip for row at time t: `s<i>  +<s>s  <status>  v<a>–v<b>` then what it was doing. */
export function anatomyTooltip(row: AnatomyRow, t: number): string {
  const head = [`${row.label}`, `${formatElapsed(t)}`];
  if (row.status) head.push(row.status);
  if (row.versions.length > 1) head.push(`v${row.versions[0]}–v${row.versions.at(-1)}`);
  const lines = [head.join("  ")];
  const seg = segmentAt(row, t);
  if (seg?.kind === "gen") {
    const parts = ["generating"];
    if (seg.turn > 0) parts.unshift(`turn ${seg.turn}`);
    if (seg.version !== null) parts.push(`· v${seg.version}`);
    lines.push(parts.join(" "));
  } else if (seg?.kind === "tool") {
    lines.push(seg.turn > 0 ? `tool wait (turn ${seg.turn})` : "tool wait");
  } else if (row.attempts.some((a) => t >= a.a && t <= a.b)) {
    lines.push("queued / waiting");
  }
  if (row.info) lines.push(row.info.replaceAll("·", "  "));
  return lines.join("\n");
}
