/**
 * One scalar metric chart on canvas (docs/views.md 2.5): the model comes from the
 * dashboard's own preparer (lib/charts/prepare-line.ts), domains from lib/charts/core/bounds
 * and the drag-box zoom from lib/charts/core/drag (double-click resets). After each draw
 * the canvas carries `data-drawn` (finite points drawn) and `data-x0`/`data-x1` (the view).
 */
import { viewDomain } from "@/lib/charts/core/bounds";
import { dragOverlay, resolveRelease } from "@/lib/charts/core/drag";
import { formatTickUnit } from "@/lib/charts/core/format";
import { clampToPlot, NO_ZOOM, type PlotBox, type Zoom } from "@/lib/charts/core/range";
import { stepTicks } from "@/lib/charts/core/ticks";
import type { LineModel } from "@/lib/charts/prepare-line";
import { COLORS, drawAxes, hidpiCanvas, invert, scale } from "./canvas";

const W = 360;
const H = 170;
const BOX: PlotBox = { left: 52, top: 8, width: W - 60, height: H - 28 };

export function lineChart(model: LineModel): HTMLCanvasElement {
  const { canvas, ctx } = hidpiCanvas(W, H);
  canvas.className = "chart";
  let zoom: Zoom = NO_ZOOM;
  let drag: { start: [number, number]; cur: [number, number] } | null = null;

  const draw = () => {
    const d = viewDomain(model, zoom);
    ctx.clearRect(0, 0, W, H);
    drawAxes(ctx, BOX, d.x, d.y, (v) => String(v), (v, step) => formatTickUnit(v, model.unit, step), stepTicks);
    const sx = scale(d.x, BOX.left, BOX.left + BOX.width);
    const sy = scale(d.y, BOX.top + BOX.height, BOX.top);
    ctx.save();
    ctx.beginPath();
    ctx.rect(BOX.left, BOX.top, BOX.width, BOX.height);
    ctx.clip();
    let drawn = 0;
    for (const s of model.series) {
      ctx.strokeStyle = s.color ?? COLORS.accent;
      ctx.fillStyle = s.color ?? COLORS.accent;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < s.x.length; i++) {
        const y = s.y[i]!;
        if (!Number.isFinite(y)) {
          pen = false;
          continue;
        }
        const px = sx(s.x[i]!);
        const py = sy(y);
        if (pen) ctx.lineTo(px, py);
        else ctx.moveTo(px, py);
        pen = true;
        if (s.x[i]! >= d.x[0] && s.x[i]! <= d.x[1]) drawn++;
      }
      ctx.stroke();
      if (s.x.length <= 60)
        for (let i = 0; i < s.x.length; i++)
          if (Number.isFinite(s.y[i]!)) {
            ctx.beginPath();
            ctx.arc(sx(s.x[i]!), sy(s.y[i]!), 2, 0, Math.PI * 2);
            ctx.fill();
          }
    }
    if (!d.inWindow) {
      ctx.fillStyle = COLORS.muted;
      ctx.textAlign = "center";
      ctx.fillText(model.points ? "no points in this window" : "no numeric values", BOX.left + BOX.width / 2, BOX.top + BOX.height / 2);
    }
    if (drag) {
      const o = dragOverlay(drag.start, drag.cur, BOX);
      ctx.fillStyle = COLORS.zoom;
      ctx.fillRect(o.x, o.y, o.w, o.h);
    }
    ctx.restore();
    canvas.dataset.drawn = String(drawn);
    canvas.dataset.x0 = String(d.x[0]);
    canvas.dataset.x1 = String(d.x[1]);
  };

  const at = (e: MouseEvent): [number, number] => {
    const r = canvas.getBoundingClientRect();
    return clampToPlot(e.clientX - r.left, e.clientY - r.top, BOX);
  };
  canvas.addEventListener("mousedown", (e) => {
    const p = at(e);
    drag = { start: p, cur: p };
  });
  canvas.addEventListener("mousemove", (e) => {
    if (!drag) return;
    drag.cur = at(e);
    draw();
  });
  const finish = (e: MouseEvent) => {
    if (!drag) return;
    const d = viewDomain(model, zoom);
    const rel = resolveRelease(drag.start, at(e), zoom, invert(d.x, BOX.left, BOX.left + BOX.width), invert(d.y, BOX.top + BOX.height, BOX.top));
    drag = null;
    if (rel.kind === "zoom") zoom = rel.zoom;
    draw();
  };
  canvas.addEventListener("mouseup", finish);
  canvas.addEventListener("mouseleave", (e) => drag && finish(e));
  canvas.addEventListener("dblclick", () => {
    zoom = NO_ZOOM;
    draw();
  });
  draw();
  return canvas;
}
