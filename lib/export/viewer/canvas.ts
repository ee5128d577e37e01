/**
 * Canvas plumbing of the offline viewer: a HiDPI canvas of a given CSS size and the axis
 * drawing every chart shares. Tick values and labels come from lib/charts/core (ticks,
 * format) — the same rules as the dashboard's charts (docs/charts.md).
 */
import type { PlotBox, Range } from "@/lib/charts/core/range";
import { niceTicks, tickStep } from "@/lib/charts/core/ticks";

export const COLORS = {
  text: "#3a352d",
  muted: "#8a8377",
  grid: "#e7e2d8",
  accent: "#2f6fb0",
  bad: "#c0392b",
  zoom: "rgba(47, 111, 176, 0.15)",
};

export function hidpiCanvas(width: number, height: number): { canvas: HTMLCanvasElement; ctx: CanvasRenderingContext2D } {
  const canvas = document.createElement("canvas");
  const dpr = Math.max(1, Math.min(2, globalThis.devicePixelRatio || 1));
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d")!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { canvas, ctx };
}

export function scale(domain: Range, lo: number, hi: number): (v: number) => number {
  const d = domain[1] - domain[0] || 1;
  return (v) => lo + ((v - domain[0]) / d) * (hi - lo);
}

export function invert(domain: Range, lo: number, hi: number): (px: number) => number {
  const r = hi - lo || 1;
  return (px) => domain[0] + ((px - lo) / r) * (domain[1] - domain[0]);
}

/** Grid lines and tick labels; `fmt` turns a tick into its label (given the tick step). */
/** The band of an x-only drag selection (`sel` = the two pixel columns), full plot height. */
export function fillXSelection(ctx: CanvasRenderingContext2D, sel: readonly [number, number] | null, box: PlotBox): void {
  if (!sel) return;
  ctx.fillStyle = COLORS.zoom;
  ctx.fillRect(Math.min(sel[0], sel[1]), box.top, Math.abs(sel[1] - sel[0]), box.height);
}

export function drawAxes(
  ctx: CanvasRenderingContext2D,
  box: PlotBox,
  x: Range,
  y: Range | null,
  fmtX: (v: number, step: number) => string,
  fmtY: (v: number, step: number) => string,
  xTicks: (d: Range, n: number) => number[] = niceTicks,
): void {
  ctx.save();
  ctx.font = "10px system-ui, sans-serif";
  ctx.fillStyle = COLORS.muted;
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = 1;
  const sx = scale(x, box.left, box.left + box.width);
  const xt = xTicks(x, Math.max(2, Math.floor(box.width / 80)));
  const xs = tickStep(xt, x);
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const t of xt) {
    const px = Math.round(sx(t)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(px, box.top);
    ctx.lineTo(px, box.top + box.height);
    ctx.stroke();
    ctx.fillText(fmtX(t, xs), px, box.top + box.height + 3);
  }
  if (y) {
    const sy = scale(y, box.top + box.height, box.top);
    const yt = niceTicks(y, Math.max(2, Math.floor(box.height / 28)));
    const ys = tickStep(yt, y);
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const t of yt) {
      const py = Math.round(sy(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(box.left, py);
      ctx.lineTo(box.left + box.width, py);
      ctx.stroke();
      ctx.fillText(fmtY(t, ys), box.left - 4, py);
    }
  }
  ctx.restore();
}
