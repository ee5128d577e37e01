/**
 * Canvas drawing of a CanvasChart: grid, bands, then the marks — lines (pen lifts at
 * gaps, dots when sparse, always a dot for an isolated point, which a line would not
 * show) or scatter dots (flagged ones on top, so red is never hidden). Pure drawing:
 * every decision was made by the preparers and lib/charts/core.
 */
import type { Reduced } from "@/lib/charts/core/envelope";
import type { ChartModel } from "@/lib/charts/core/model";
import type { PlotBox } from "@/lib/charts/core/range";
import { strokeSeries } from "@/components/charts/canvas";
import type { ChartTheme } from "@/components/charts/use-chart-theme";

export interface DrawInput {
  model: ChartModel;
  plot: PlotBox;
  /** line mode: every series reduced to the window (M4 envelope when dense) */
  reduced: readonly Reduced[];
  sx: (v: number) => number;
  sy: (v: number) => number;
  yTicks: readonly number[];
  theme: ChartTheme;
  lineWidth: number;
  /**
   * line mode, smoothing on: each series' smoothed line reduced to the window (null where a
   * series has none). The raw line is then drawn faint underneath, never left out
   * (docs/charts.md §6).
   */
  smooth?: readonly (Reduced | null)[] | null;
}

/** Opacity of the raw line under a smoothed one. */
export const RAW_ALPHA = 0.28;

/** Above this many points a scatter draws smaller, translucent dots. */
const DENSE_SCATTER = 2000;

export function drawChart(ctx: CanvasRenderingContext2D, d: DrawInput): void {
  const { model, plot, sx, sy, theme } = d;
  ctx.strokeStyle = theme.border;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of d.yTicks) {
    const y = Math.round(sy(t)) + 0.5;
    ctx.moveTo(plot.left, y);
    ctx.lineTo(plot.left + plot.width, y);
  }
  ctx.stroke();

  ctx.font = theme.font;
  for (const b of model.bands) {
    const x0 = Math.max(plot.left, sx(b.x0));
    const x1 = Math.min(plot.left + plot.width, sx(b.x1));
    if (x1 <= x0) continue;
    ctx.globalAlpha = b.strong ? 0.55 : 0.3;
    ctx.fillStyle = theme.dark ? "#5a5246" : "#cfc6b9";
    ctx.fillRect(x0, plot.top, Math.max(1, x1 - x0), plot.height);
    ctx.globalAlpha = 1;
    if (b.label && x1 - x0 > 44) {
      ctx.fillStyle = theme.muted;
      ctx.fillText(b.label, x0 + 4, plot.top + 12);
    }
  }

  ctx.save();
  ctx.beginPath();
  ctx.rect(plot.left - 4, plot.top - 4, plot.width + 8, plot.height + 8); // room for edge dots
  ctx.clip();
  if (model.mode === "scatter") drawScatter(ctx, d);
  else drawLines(ctx, d);
  ctx.restore();
}

function drawLines(ctx: CanvasRenderingContext2D, d: DrawInput): void {
  const { model, plot, sx, sy, theme } = d;
  ctx.lineJoin = "round";
  const smoothing = !!d.smooth && d.smooth.some((r) => r !== null);
  model.series.forEach((s, k) => {
    const r = d.reduced[k];
    if (!r) return;
    const color = s.color ?? theme.accent;
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = smoothing ? Math.max(1, d.lineWidth - 0.5) : d.lineWidth;
    ctx.globalAlpha = smoothing ? RAW_ALPHA : 1;
    strokeSeries(ctx, r.x, r.y, r.length, sx, sy);
    const sparse = !r.reduced && r.length * 8 < plot.width;
    for (let i = 0; i < r.length; i++) {
      const y = r.y[i]!;
      if (Number.isNaN(y)) continue;
      const isolated = (i === 0 || Number.isNaN(r.y[i - 1]!)) && (i === r.length - 1 || Number.isNaN(r.y[i + 1]!));
      if (!sparse && !isolated) continue;
      ctx.beginPath();
      ctx.arc(sx(r.x[i]!), sy(y), sparse ? 3 : 2, 0, Math.PI * 2);
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  });
  // smoothed lines on top of every raw line, full strength
  if (!smoothing) return;
  model.series.forEach((s, k) => {
    const r = d.smooth![k];
    if (!r) return;
    ctx.strokeStyle = s.color ?? theme.accent;
    ctx.lineWidth = d.lineWidth + 0.5;
    strokeSeries(ctx, r.x, r.y, r.length, sx, sy);
  });
}

function drawScatter(ctx: CanvasRenderingContext2D, d: DrawInput): void {
  const { model, sx, sy, theme } = d;
  const n = model.points;
  const dense = n > DENSE_SCATTER;
  const r = dense ? 2.5 : 3.5;
  ctx.globalAlpha = dense ? 0.6 : 0.9;
  for (const s of model.series) {
    for (const pass of [0, 1]) {
      // normal points first, flagged ones on top
      ctx.fillStyle = pass ? theme.bad : (s.color ?? theme.accent);
      ctx.beginPath();
      for (let i = 0; i < s.x.length; i++) {
        const y = s.y[i]!;
        if (!Number.isFinite(y) || (s.flag?.[i] ?? 0) !== pass) continue;
        const px = sx(s.x[i]!);
        const py = sy(y);
        ctx.moveTo(px + r, py);
        ctx.arc(px, py, r, 0, Math.PI * 2);
      }
      ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
}
