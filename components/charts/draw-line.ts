/**
 * Canvas drawing of a line chart: grid, clipped lines with pen lifts at gaps, dots when
 * sparse, and always a dot for an isolated point (a value between two gaps would be
 * invisible as a line). Pure drawing: every decision was made by the preparers.
 */
import type { Reduced } from "@/lib/charts/decimate";
import { strokeSeries } from "@/components/charts/canvas";
import type { ChartTheme } from "@/components/charts/use-chart-theme";

export interface LineGeometry {
  width: number;
  height: number;
  left: number;
  top: number;
  plotW: number;
  plotH: number;
}

export function drawLineChart(
  ctx: CanvasRenderingContext2D,
  g: LineGeometry,
  series: readonly { color: string; reduced: Reduced }[],
  sx: (v: number) => number,
  sy: (v: number) => number,
  yTicks: readonly number[],
  theme: ChartTheme,
  lineWidth: number,
): void {
  ctx.strokeStyle = theme.border;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of yTicks) {
    const y = Math.round(sy(t)) + 0.5;
    ctx.moveTo(g.left, y);
    ctx.lineTo(g.left + g.plotW, y);
  }
  ctx.stroke();

  ctx.save();
  ctx.beginPath();
  ctx.rect(g.left - 4, g.top - 4, g.plotW + 8, g.plotH + 8); // room for edge dots
  ctx.clip();
  ctx.lineJoin = "round";
  for (const s of series) {
    const r = s.reduced;
    ctx.strokeStyle = s.color;
    ctx.fillStyle = s.color;
    ctx.lineWidth = lineWidth;
    strokeSeries(ctx, r.x, r.y, r.length, sx, sy);
    const sparse = !r.reduced && r.length * 8 < g.plotW;
    for (let i = 0; i < r.length; i++) {
      const y = r.y[i]!;
      if (Number.isNaN(y)) continue;
      const isolated = (i === 0 || Number.isNaN(r.y[i - 1]!)) && (i === r.length - 1 || Number.isNaN(r.y[i + 1]!));
      if (!sparse && !isolated) continue;
      ctx.beginPath();
      ctx.arc(sx(r.x[i]!), sy(y), sparse ? 3 : 2, 0, Math.PI * 2);
      ctx.fill();
    }
  }
  ctx.restore();
}
