/**
 * Drawing of one lane row (66 px): phase band (14 px, nested phases as a lower sub-band,
 * `train_wait` hatched), util area (40 px), optional memory line and sglang overlay,
 * vertical time grid. All data decisions were made in lib/charts/prepare-lanes.ts; this
 * only maps time → pixels for the current viewport and strokes.
 */
import { reduceM4 } from "@/lib/charts/decimate";
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

  // phase band
  const ph = lane.phases;
  for (let i = 0; i < ph.t0.length; i++) {
    const a = ph.t0[i]!;
    const b = ph.t1[i]!;
    if (b < v.v0 || a > v.v1) continue;
    const x0 = Math.max(left - 1, sx(a));
    const x1 = Math.min(left + plotW + 1, sx(b));
    const w = Math.max(1, x1 - x0);
    const depth = ph.depth[i]!;
    const y = depth === 0 ? BAND_Y : BAND_Y + 8;
    const h = depth === 0 ? BAND_H : BAND_H - 8;
    const name = model.phaseNames[ph.name[i]!] ?? "";
    ctx.fillStyle = phaseColor(name, theme.name);
    ctx.fillRect(x0, y, w, h);
    if (isHatchedPhase(name)) hatch(ctx, x0, y, w, h, colors.hatch);
  }

  // util area (min/max envelope per pixel; NaN = no samples → pen lifted, nothing filled)
  const g = lane.gpuTrack;
  if (g) {
    const sy = (u: number) => base - (Math.min(100, Math.max(0, u)) / 100) * UTIL_H;
    const r = reduceM4(g.ts, g.util, v.v0, v.v1, plotW);
    ctx.fillStyle = colors.utilFill;
    ctx.strokeStyle = colors.utilStroke;
    ctx.lineWidth = 1;
    let start = -1;
    const flush = (end: number) => {
      if (start < 0 || end <= start) return;
      ctx.beginPath();
      ctx.moveTo(sx(r.x[start]!), base);
      for (let i = start; i < end; i++) ctx.lineTo(sx(r.x[i]!), sy(r.y[i]!));
      ctx.lineTo(sx(r.x[end - 1]!), base);
      ctx.closePath();
      ctx.fill();
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

    if (opts.mem && model.memMaxMb > 0) {
      const m = reduceM4(g.ts, g.mem, v.v0, v.v1, plotW);
      ctx.strokeStyle = colors.mem;
      ctx.lineWidth = 1.2;
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < m.length; i++) {
        const y = m.y[i]!;
        if (Number.isNaN(y)) {
          pen = false;
          continue;
        }
        const py = base - (y / model.memMaxMb) * UTIL_H;
        if (pen) ctx.lineTo(sx(m.x[i]!), py);
        else ctx.moveTo(sx(m.x[i]!), py);
        pen = true;
      }
      ctx.stroke();
    }
  }

  // sglang overlay: the covering engine's series over each topology window
  const ov = model.overlay;
  if (ov && ov.max > 0) {
    ctx.strokeStyle = colors.overlay;
    ctx.lineWidth = 1.6;
    for (const s of lane.overlay) {
      const a = Math.max(s.t0, v.v0);
      const b = Math.min(s.t1, v.v1);
      if (!(b > a)) continue;
      const series = ov.series[s.series]!;
      const r = reduceM4(series.ts, series.value, a, b, Math.max(2, (b - a) * k));
      ctx.save();
      ctx.beginPath();
      ctx.rect(sx(a), 0, Math.max(1, (b - a) * k), LANE_H);
      ctx.clip();
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < r.length; i++) {
        const y = r.y[i]!;
        if (Number.isNaN(y)) {
          pen = false;
          continue;
        }
        const py = base - (Math.max(0, y) / ov.max) * UTIL_H;
        if (pen) ctx.lineTo(sx(r.x[i]!), py);
        else ctx.moveTo(sx(r.x[i]!), py);
        pen = true;
      }
      ctx.stroke();
      ctx.restore();
    }
  }
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
  ctx.fillText(`g${lane.index}`, 8, UTIL_Y + 8);
  ctx.font = theme.font;
  if (showNode) {
    ctx.fillStyle = theme.muted;
    ctx.fillText(`${lane.node}:${lane.gpu}`.slice(0, 14), 8, UTIL_Y + 22);
  }
}

/** Diagonal 45° strokes every 5 px (rising left to right), clipped to the rectangle. */
export function hatch(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number, color: string): void {
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  ctx.beginPath();
  const x0 = Math.floor(x / 5) * 5;
  for (let px = x0 - h; px < x + w; px += 5) {
    ctx.moveTo(px, y + h);
    ctx.lineTo(px + h, y);
  }
  ctx.stroke();
  ctx.restore();
}
