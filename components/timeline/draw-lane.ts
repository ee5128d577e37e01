/**
 * Drawing of one lane row (66 px): phase band (14 px, nested phases as a lower sub-band,
 * `train_wait` hatched), util area (40 px), optional memory line and sglang overlay,
 * vertical time grid. All data decisions were made in lib/charts/prepare-lanes.ts; this
 * only maps time → pixels for the current viewport and strokes.
 */
import { columnEnvelope, reduceM4, traceColumns } from "@/lib/charts/core/envelope";
import { isHatchedPhase, laneColors, phaseColor } from "@/lib/charts/palette";
import type { LaneRow, LanesModel } from "@/lib/charts/prepare-lanes";
import type { Viewport } from "@/lib/charts/timeline-viewport";
import type { ChartTheme } from "@/components/charts/use-chart-theme";
import { TIME_MARGIN } from "@/components/timeline/viewport-store";

export const LANE_H = 66;
const BAND_Y = 4;
const BAND_H = 14;
const UTIL_Y = BAND_Y + BAND_H + 4;
const UTIL_H = 40;

export interface LaneDrawOpts {
  mem: boolean;
  ticks: readonly number[];
  showNode: boolean;
  /** false when rendering the off-screen strip (labels are drawn on the visible canvas) */
  labels?: boolean;
}

export function drawLane(
  ctx: CanvasRenderingContext2D,
  width: number,
  lane: LaneRow,
  model: LanesModel,
  v: Viewport,
  theme: ChartTheme,
  opts: LaneDrawOpts,
): void {
  const left = TIME_MARGIN.left;
  const plotW = Math.max(1, width - left - TIME_MARGIN.right);
  const span = v.v1 - v.v0;
  const k = plotW / span;
  const sx = (t: number) => left + (t - v.v0) * k;
  const colors = laneColors(theme.name);
  const base = UTIL_Y + UTIL_H;

  if (opts.labels !== false) drawLaneLabels(ctx, lane, theme, opts.showNode);
  ctx.font = theme.font;
  ctx.textBaseline = "middle";

  // time grid
  ctx.strokeStyle = theme.border;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of opts.ticks) {
    const x = Math.round(sx(t)) + 0.5;
    if (x < left || x > left + plotW) continue;
    ctx.moveTo(x, 0);
    ctx.lineTo(x, LANE_H);
  }
  ctx.moveTo(left, base + 0.5);
  ctx.lineTo(left + plotW, base + 0.5);
  ctx.stroke();

  ctx.save();
  ctx.beginPath();
  ctx.rect(left, 0, plotW, LANE_H);
  ctx.clip();

  // phase band: one path per (depth, phase) so the canvas switches colour a few times per
  // lane, not once per phase; nested phases (depth 1) paint over their parents.
  const ph = lane.phases;
  const bands = new Map<number, Path2D>();
  for (let i = 0; i < ph.t0.length; i++) {
    const a = ph.t0[i]!;
    const b = ph.t1[i]!;
    if (b < v.v0 || a > v.v1) continue;
    const x0 = Math.max(left - 1, sx(a));
    const x1 = Math.min(left + plotW + 1, sx(b));
    const depth = ph.depth[i]! === 0 ? 0 : 1;
    const key = depth * 65536 + ph.name[i]!;
    let p = bands.get(key);
    if (!p) bands.set(key, (p = new Path2D()));
    p.rect(x0, depth === 0 ? BAND_Y : BAND_Y + 8, Math.max(1, x1 - x0), depth === 0 ? BAND_H : BAND_H - 8);
  }
  for (const key of [...bands.keys()].sort((p, q) => p - q)) {
    const path = bands.get(key)!;
    const name = model.phaseNames[key % 65536] ?? "";
    ctx.fillStyle = phaseColor(name, theme.name);
    ctx.fill(path);
    if (isHatchedPhase(name)) {
      const pattern = hatchPattern(ctx, colors.hatch);
      if (pattern) {
        ctx.fillStyle = pattern;
        ctx.fill(path);
      }
    }
  }

  // util area, memory line, sglang overlay: min/max per pixel column (see drawSeries)
  const g = lane.gpuTrack;
  if (g) {
    const syUtil = (u: number) => base - (Math.min(100, Math.max(0, u)) / 100) * UTIL_H;
    drawSeries(ctx, g.ts, g.util, v.v0, v.v1, left, plotW, syUtil, { line: colors.utilStroke, lineWidth: 1, fill: colors.utilFill, base });
    if (opts.mem && model.memMaxMb > 0) {
      const max = model.memMaxMb;
      drawSeries(ctx, g.ts, g.mem, v.v0, v.v1, left, plotW, (y) => base - (y / max) * UTIL_H, { line: colors.mem, lineWidth: 1.2 });
    }
  }

  // sglang overlay: the covering engine's series over each topology window
  const ov = model.overlay;
  if (ov && ov.max > 0) {
    const syOv = (y: number) => base - (Math.max(0, y) / ov.max) * UTIL_H;
    for (const s of lane.overlay) {
      const a = Math.max(s.t0, v.v0);
      const b = Math.min(s.t1, v.v1);
      if (!(b > a)) continue;
      const series = ov.series[s.series]!;
      drawSeries(ctx, series.ts, series.value, a, b, sx(a), Math.max(2, (b - a) * k), syOv, { line: colors.overlay, lineWidth: 1.6 });
    }
  }
  ctx.restore();

}

interface SeriesStyle {
  line: string;
  lineWidth: number;
  /** fill the area between the series and `base` */
  fill?: string;
  base?: number;
}

/**
 * One series over [x0, x1], drawn into [px0, px0 + widthPx]. Dense windows (more points
 * than pixels) become one 1-px column per pixel: the area up to each column's max and
 * the min–max bar (joined to the previous column) in the line colour — axis-aligned
 * boxes, each set filled as one outline (traceColumns), cheap whatever the noise (see
 * columnEnvelope). Sparse windows are stroked through their raw points; NaN lifts the pen.
 */
function drawSeries(
  ctx: CanvasRenderingContext2D,
  xs: ArrayLike<number>,
  ys: ArrayLike<number>,
  x0: number,
  x1: number,
  px0: number,
  widthPx: number,
  sy: (v: number) => number,
  style: SeriesStyle,
): void {
  const env = columnEnvelope(xs, ys, x0, x1, widthPx);
  const lw = style.lineWidth;
  if (env) {
    const cols = env.cols;
    const top = new Float64Array(cols);
    const bottom = new Float64Array(cols);
    if (style.fill !== undefined && style.base !== undefined) {
      for (let c = 0; c < cols; c++) {
        const h = env.hi[c]!;
        top[c] = Number.isNaN(h) ? Number.NaN : sy(h);
      }
      bottom.fill(style.base);
      ctx.fillStyle = style.fill;
      ctx.beginPath();
      traceColumns(ctx, cols, px0, top, bottom);
      ctx.fill();
    }
    for (let c = 0; c < cols; c++) {
      const a = env.barLo[c]!;
      if (Number.isNaN(a)) {
        top[c] = Number.NaN;
        continue;
      }
      const t = sy(env.barHi[c]!);
      top[c] = t - lw / 2;
      bottom[c] = top[c]! + Math.max(lw, sy(a) - t + lw);
    }
    ctx.fillStyle = style.line;
    ctx.beginPath();
    traceColumns(ctx, cols, px0, top, bottom);
    ctx.fill();
    return;
  }
  const r = reduceM4(xs, ys, x0, x1, widthPx);
  const k = widthPx / (x1 - x0);
  const sx = (t: number) => px0 + (t - x0) * k;
  ctx.save();
  ctx.beginPath();
  ctx.rect(px0, 0, widthPx, LANE_H);
  ctx.clip();
  ctx.strokeStyle = style.line;
  ctx.lineWidth = lw;
  let start = -1;
  const flush = (end: number) => {
    if (start < 0 || end <= start) return;
    if (style.fill !== undefined && style.base !== undefined) {
      ctx.fillStyle = style.fill;
      ctx.beginPath();
      ctx.moveTo(sx(r.x[start]!), style.base);
      for (let i = start; i < end; i++) ctx.lineTo(sx(r.x[i]!), sy(r.y[i]!));
      ctx.lineTo(sx(r.x[end - 1]!), style.base);
      ctx.closePath();
      ctx.fill();
    }
    ctx.beginPath();
    ctx.moveTo(sx(r.x[start]!), sy(r.y[start]!));
    for (let i = start + 1; i < end; i++) ctx.lineTo(sx(r.x[i]!), sy(r.y[i]!));
    ctx.stroke();
  };
  for (let i = 0; i < r.length; i++) {
    if (Number.isNaN(r.y[i]!)) {
      flush(i);
      start = -1;
    } else if (start < 0) start = i;
  }
  flush(r.length);
  ctx.restore();
}

/** Lane name (and node when several), plus a note when the lane has no data at all. */
export function drawLaneLabels(ctx: CanvasRenderingContext2D, lane: LaneRow, theme: ChartTheme, showNode: boolean): void {
  if (lane.phases.t0.length === 0 && !lane.gpuTrack) {
    ctx.font = theme.font;
    ctx.fillStyle = theme.muted;
    ctx.textBaseline = "middle";
    ctx.fillText("no data in this window", TIME_MARGIN.left + 8, UTIL_Y + UTIL_H / 2);
  }
  ctx.font = `600 ${theme.font}`;
  ctx.fillStyle = theme.text;
  ctx.textBaseline = "middle";
  const label = laneLabel(lane);
  ctx.fillText(label.name, 8, UTIL_Y + 8);
  ctx.font = theme.font;
  if (showNode) {
    ctx.fillStyle = theme.muted;
    ctx.fillText(label.node, 8, UTIL_Y + 22);
  }
}

/** A lane's row label: its name and (clipped) node:gpu — on its canvas, or on its row before that is drawn. */
export function laneLabel(lane: { index: number; node: string; gpu: number }): { name: string; node: string } {
  return { name: `g${lane.index}`, node: `${lane.node}:${lane.gpu}`.slice(0, 14) };
}

const HATCH = 5;
const hatchTiles = new Map<string, HTMLCanvasElement | null>();
const hatchPatterns = new WeakMap<CanvasRenderingContext2D, Map<string, CanvasPattern | null>>();

/**
 * The idle hatch as a repeating 5-px tile (45° strokes rising left to right, anchored to
 * the canvas so neighbouring bands line up) — one fill per band instead of a clip and a
 * stroke per phase. One tile per colour and pixel ratio; a pattern per canvas context.
 */
function hatchPattern(ctx: CanvasRenderingContext2D, color: string): CanvasPattern | null {
  const dpr = ctx.getTransform().a || 1;
  const key = `${color}@${dpr}`;
  let byColor = hatchPatterns.get(ctx);
  if (!byColor) hatchPatterns.set(ctx, (byColor = new Map<string, CanvasPattern | null>()));
  if (byColor.has(key)) return byColor.get(key)!;
  let tile = hatchTiles.get(key);
  if (tile === undefined) {
    const c = document.createElement("canvas");
    c.width = c.height = Math.round(HATCH * dpr);
    const t = c.getContext("2d");
    if (t) {
      t.scale(dpr, dpr);
      t.strokeStyle = color;
      t.lineWidth = 1;
      t.beginPath();
      for (const o of [-HATCH, 0, HATCH]) {
        t.moveTo(o, HATCH);
        t.lineTo(o + HATCH, 0);
      }
      t.stroke();
    }
    tile = t ? c : null;
    hatchTiles.set(key, tile);
  }
  const pattern = tile ? ctx.createPattern(tile, "repeat") : null;
  pattern?.setTransform(new DOMMatrix().scale(1 / dpr, 1 / dpr));
  byColor.set(key, pattern);
  return pattern;
}
