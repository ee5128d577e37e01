/**
 * Compute Utilization for the whole run on canvas (docs/views.md 3): one row per GPU lane
 * with its phase bands (palette of lib/charts/palette) under its util line (0–100 %), or,
 * above --max-lanes, the fleet overview (phase composition stack and the util median band,
 * lib/charts/prepare-fleet). Time ticks are elapsed from the run start (formatElapsed).
 * Drag on the time axis zooms every row; double-click resets. `data-drawn` counts the
 * marks drawn.
 */
import { formatElapsed } from "@/lib/charts/core/format";
import type { PlotBox, Range } from "@/lib/charts/core/range";
import { ticksFrom } from "@/lib/charts/core/ticks";
import { prepareFleet } from "@/lib/charts/prepare-fleet";
import { phaseColor } from "@/lib/charts/palette";
import type { Report } from "@/lib/contracts/report";
import { COLORS, drawAxes, fillXSelection, hidpiCanvas, invert, scale } from "./canvas";
import { h } from "./dom";

/** A lane as a key, `"{node}:{gpu}"` (docs/formats.md 0; the gpu answer's keys). Local: the contracts module would pull zod into the page. */
const laneKey = (node: string, gpu: number) => `${node}:${gpu}`;

const W = 1100;
const LEFT = 120;
const ROW = 16;

type Lanes = Extract<NonNullable<Report["utilization"]>, { kind: "lanes" }>;
type Fleet = Extract<NonNullable<Report["utilization"]>, { kind: "fleet" }>;

function legend(names: Iterable<string>): HTMLElement {
  return h(
    "div",
    { class: "legend" },
    [...names].map((n) => h("span", { class: "legend-item" }, h("i", { style: `background:${phaseColor(n)}` }), n)),
  );
}

/** Drag-to-zoom on x for a chart redrawn by `draw(x)`. */
function zoomable(canvas: HTMLCanvasElement, full: Range, box: PlotBox, draw: (x: Range, sel: [number, number] | null) => void) {
  let x: Range = full;
  let start: number | null = null;
  const px = (e: MouseEvent) => Math.min(box.left + box.width, Math.max(box.left, e.clientX - canvas.getBoundingClientRect().left));
  canvas.addEventListener("mousedown", (e) => (start = px(e)));
  canvas.addEventListener("mousemove", (e) => start !== null && draw(x, [start, px(e)]));
  canvas.addEventListener("mouseup", (e) => {
    if (start === null) return;
    const end = px(e);
    if (Math.abs(end - start) >= 10) {
      const inv = invert(x, box.left, box.left + box.width);
      x = [inv(Math.min(start, end)), inv(Math.max(start, end))];
    }
    start = null;
    draw(x, null);
  });
  canvas.addEventListener("dblclick", () => {
    x = full;
    draw(x, null);
  });
  draw(x, null);
}

export function lanesChart(u: Lanes, phases: Report["phases"], t0: number): HTMLElement {
  const lanes = u.topology.lanes;
  const height = lanes.length * ROW + 24;
  const box: PlotBox = { left: LEFT, top: 4, width: W - LEFT - 10, height: lanes.length * ROW };
  const { canvas, ctx } = hidpiCanvas(W, height);
  canvas.className = "chart util-chart";
  const rowOf = new Map<string, number>();
  lanes.forEach((l, i) => rowOf.set(laneKey(l.node, l.gpu), i));
  const names = new Set<string>();
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const p of phases?.phases ?? []) {
    names.add(p.name);
    lo = Math.min(lo, p.t0);
    hi = Math.max(hi, p.t1);
  }
  for (const g of Object.values(u.gpu.lanes))
    if (g.ts.length) {
      lo = Math.min(lo, g.ts[0]!);
      hi = Math.max(hi, g.ts[g.ts.length - 1]!);
    }
  const full: Range = lo < hi ? [lo, hi] : [t0, t0 + 1];
  zoomable(canvas, full, box, (x, sel) => {
    ctx.clearRect(0, 0, W, height);
    drawAxes(ctx, box, x, null, (v) => formatElapsed(v - t0), () => "", ticksFrom(t0));
    const sx = scale(x, box.left, box.left + box.width);
    let drawn = 0;
    ctx.font = "10px system-ui, sans-serif";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    lanes.forEach((l, i) => {
      ctx.fillStyle = COLORS.text;
      ctx.fillText(laneKey(l.node, l.gpu), LEFT - 6, box.top + i * ROW + ROW / 2);
    });
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.left, box.top, box.width, box.height);
    ctx.clip();
    for (const p of phases?.phases ?? []) {
      const r = rowOf.get(laneKey(p.node, p.gpu));
      if (r === undefined || p.t1 < x[0] || p.t0 > x[1]) continue;
      const a = sx(p.t0);
      ctx.fillStyle = phaseColor(p.name);
      ctx.fillRect(a, box.top + r * ROW + 1, Math.max(1, sx(p.t1) - a), ROW - 2);
      drawn++;
    }
    ctx.strokeStyle = "#1d1a16";
    ctx.lineWidth = 1;
    for (const [key, g] of Object.entries(u.gpu.lanes)) {
      const r = rowOf.get(key);
      if (r === undefined) continue;
      const base = box.top + r * ROW + ROW - 1;
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < g.ts.length; i++) {
        const t = g.ts[i]!;
        const v = g.util[i]!;
        if (t < x[0] || t > x[1] || !Number.isFinite(v)) {
          pen = false;
          continue;
        }
        const py = base - (v / 100) * (ROW - 2);
        if (pen) ctx.lineTo(sx(t), py);
        else ctx.moveTo(sx(t), py);
        pen = true;
        drawn++;
      }
      ctx.stroke();
    }
    fillXSelection(ctx, sel, box);
    ctx.restore();
    canvas.dataset.drawn = String(drawn);
    canvas.dataset.x0 = String(x[0]);
    canvas.dataset.x1 = String(x[1]);
  });
  canvas.dataset.lanes = String(lanes.length);
  return h("div", {}, legend(names), canvas, h("p", { class: "muted" }, `${lanes.length} GPU lanes · phase bands, util line 0–100 % per lane · drag to zoom, double-click to reset`));
}

export function fleetChart(u: Fleet, t0: number): HTMLElement {
  const m = prepareFleet(u.fleet);
  const height = 260;
  const box: PlotBox = { left: 50, top: 6, width: W - 60, height: height - 26 };
  const { canvas, ctx } = hidpiCanvas(W, height);
  canvas.className = "chart fleet-chart";
  const bw = (m.t1 - m.t0) / m.xBuckets;
  zoomable(canvas, [m.t0, m.t1], box, (x, sel) => {
    ctx.clearRect(0, 0, W, height);
    drawAxes(ctx, box, x, [0, 100], (v) => formatElapsed(v - t0), (v) => `${v}%`, ticksFrom(t0));
    const sx = scale(x, box.left, box.left + box.width);
    const sy = scale([0, 100], box.top + box.height, box.top);
    let drawn = 0;
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.left, box.top, box.width, box.height);
    ctx.clip();
    for (let b = 0; b < m.xBuckets; b++) {
      const ta = m.t0 + b * bw;
      if (ta + bw < x[0] || ta > x[1]) continue;
      const a = sx(ta);
      const w = Math.max(1, sx(ta + bw) - a);
      let prev = 0;
      m.phases.forEach((p, k) => {
        const top = m.stack[k]![b]!;
        if (top > prev) {
          ctx.fillStyle = phaseColor(p, "light", true);
          ctx.globalAlpha = 0.55;
          ctx.fillRect(a, sy(top * 100), w, sy(prev * 100) - sy(top * 100));
          drawn++;
        }
        prev = top;
      });
      ctx.globalAlpha = 1;
    }
    ctx.strokeStyle = "#1d1a16";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    let pen = false;
    for (let b = 0; b < m.xBuckets; b++) {
      const v = m.p50[b]!;
      if (!Number.isFinite(v)) {
        pen = false;
        continue;
      }
      const px = sx(m.t0 + (b + 0.5) * bw);
      if (pen) ctx.lineTo(px, sy(v));
      else ctx.moveTo(px, sy(v));
      pen = true;
      drawn++;
    }
    ctx.stroke();
    fillXSelection(ctx, sel, box);
    ctx.restore();
    canvas.dataset.drawn = String(drawn);
  });
  canvas.dataset.lanes = String(u.lanes);
  return h(
    "div",
    {},
    legend(m.phases),
    canvas,
    h("p", { class: "muted" }, `fleet overview of ${u.lanes} GPU lanes: phase share (stacked) and median util · drag to zoom, double-click to reset`),
  );
}
