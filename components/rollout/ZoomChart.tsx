"use client";
/**
 * Canvas line/scatter chart with drag-box zoom (docs/views.md 1.9): visx scales and SVG
 * axes, marks drawn on a canvas from a ChartModel prepared in lib/rollout-view/chart.
 * The zoom is owned by the parent (controlled), so it survives data refreshes, can live
 * in the URL, and can drive other views (the token strip highlights the zoomed range).
 *
 *  drag = zoom (10px rule per axis) · click (<4px) = onPointClick · double-click = reset
 */
import { AxisBottom, AxisLeft } from "@visx/axis";
import { scaleLinear } from "@visx/scale";
import { useEffect, useMemo, useRef, useState, type MouseEvent as ReactMouseEvent } from "react";
import {
  envelope,
  MARGIN,
  nearestByX,
  nearestInPixels,
  niceTicks,
  resolveDrag,
  viewDomain,
  visibleIndexRange,
  type ChartModel,
  type DragBox,
  type Range,
  type Zoom,
} from "@/lib/rollout-view/chart";
import { formatTick } from "@/lib/rollout-view/format";
import { markPainted, prepareCanvas } from "@/components/charts/canvas";
import { MONO_FONT, readThemeColors } from "./canvas";
import { useThemeName } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { Tooltip, type TooltipState } from "./Tooltip";

const BOTTOM = MARGIN.bottom + 12; // room for the x-axis title
const TOP = MARGIN.top + 8; // room for the y-axis title

export interface ZoomChartProps {
  model: ChartModel;
  zoom: Zoom;
  onZoom: (zoom: Zoom) => void;
  height?: number;
  /** A click (press moved < 4px) near a point. */
  onPointClick?: (index: number) => void;
  /** Shade an x range (e.g. the token range hovered elsewhere). */
  highlight?: Range | null;
  /** Draw a vertical marker at this x. */
  marker?: number | null;
  label: string;
}

export function ZoomChart({ model, zoom, onZoom, height = 220, onPointClick, highlight, marker, label }: ZoomChartProps) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(wrapRef);
  const theme = useThemeName();
  const [hover, setHover] = useState<{ i: number; tip: TooltipState } | null>(null);
  const [drag, setDrag] = useState<DragBox | null>(null);

  const plotW = Math.max(10, width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(10, height - TOP - BOTTOM);
  const dom = useMemo(() => viewDomain(model, zoom), [model, zoom]);
  const sx = useMemo(() => scaleLinear<number>({ domain: [dom.x[0], dom.x[1]], range: [0, plotW] }), [dom, plotW]);
  const sy = useMemo(() => scaleLinear<number>({ domain: [dom.y[0], dom.y[1]], range: [plotH, 0] }), [dom, plotH]);
  const yTicks = useMemo(() => niceTicks(dom.y, 5), [dom]);
  const xTicks = useMemo(() => niceTicks(dom.x, Math.max(2, Math.min(8, Math.floor(plotW / 80)))), [dom, plotW]);
  const hasPoints = useMemo(() => model.y.some((v) => !Number.isNaN(v)), [model]);

  // Draw the marks: this effect syncs the canvas bitmap with (model, domain, size, theme).
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const ctx = prepareCanvas(canvas, plotW, plotH);
    if (!ctx) return;
    const c = readThemeColors(canvas);
    const X = (v: number) => sx(v);
    const Y = (v: number) => sy(v);
    // grid
    ctx.strokeStyle = c.border;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const t of yTicks) {
      const y = Math.round(Y(t)) + 0.5;
      ctx.moveTo(0, y);
      ctx.lineTo(plotW, y);
    }
    ctx.stroke();
    // bands
    ctx.font = `11px ${MONO_FONT}`;
    for (const b of model.bands) {
      const x0 = Math.max(0, X(b.x0));
      const x1 = Math.min(plotW, X(b.x1));
      if (x1 <= x0) continue;
      ctx.globalAlpha = b.strong ? 0.55 : 0.3;
      ctx.fillStyle = c.dark ? "#5a5246" : "#cfc6b9";
      ctx.fillRect(x0, 0, Math.max(1, x1 - x0), plotH);
      ctx.globalAlpha = 1;
      if (b.label && x1 - x0 > 44) {
        ctx.fillStyle = c.muted;
        ctx.fillText(b.label, x0 + 4, 12);
      }
    }
    if (highlight) {
      const x0 = Math.max(0, X(highlight[0]));
      const x1 = Math.min(plotW, X(highlight[1]));
      if (x1 > x0) {
        ctx.fillStyle = c.accent;
        ctx.globalAlpha = 0.12;
        ctx.fillRect(x0, 0, Math.max(2, x1 - x0), plotH);
        ctx.globalAlpha = 1;
      }
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, 0, plotW, plotH);
    ctx.clip();
    const [a, b] = visibleIndexRange(model, dom.x);
    if (model.mode === "scatter") {
      const dense = b - a > 2000;
      const r = dense ? 2.5 : 3.5;
      ctx.globalAlpha = dense ? 0.6 : 0.9;
      for (const pass of [0, 1]) {
        // normal points first, flagged ones on top so red is never hidden
        ctx.fillStyle = pass ? c.bad : c.accent;
        ctx.beginPath();
        for (let i = a; i < b; i++) {
          const y = model.y[i]!;
          if (Number.isNaN(y) || (model.flag?.[i] ?? 0) !== pass) continue;
          const px = X(model.x[i]!);
          const py = Y(y);
          ctx.moveTo(px + r, py);
          ctx.arc(px, py, r, 0, Math.PI * 2);
        }
        ctx.fill();
      }
      ctx.globalAlpha = 1;
    } else {
      ctx.strokeStyle = c.accent;
      ctx.lineWidth = 1.5;
      ctx.lineJoin = "round";
      const env = envelope(model, dom.x, plotW);
      ctx.beginPath();
      if (env) {
        let prevLast: [number, number] | null = null;
        for (const col of env) {
          const px = X(model.x[col.i0]!);
          if (prevLast && !col.gapBefore) {
            ctx.moveTo(prevLast[0], prevLast[1]);
            ctx.lineTo(px, Y(col.first));
          }
          ctx.moveTo(px, Y(col.min));
          ctx.lineTo(px + 0.01, Y(col.max));
          prevLast = [X(model.x[col.i1]!), Y(col.last)];
        }
      } else {
        let pen = false;
        for (let i = a; i < b; i++) {
          const y = model.y[i]!;
          if (Number.isNaN(y)) {
            pen = false;
            continue;
          }
          const px = X(model.x[i]!);
          if (pen) ctx.lineTo(px, Y(y));
          else ctx.moveTo(px, Y(y));
          pen = true;
        }
      }
      ctx.stroke();
      if (!env && b - a <= 200) {
        ctx.fillStyle = c.accent;
        ctx.beginPath();
        for (let i = a; i < b; i++) {
          const y = model.y[i]!;
          if (Number.isNaN(y)) continue;
          const px = X(model.x[i]!);
          const py = Y(y);
          ctx.moveTo(px + 2.5, py);
          ctx.arc(px, py, 2.5, 0, Math.PI * 2);
        }
        ctx.fill();
      }
    }
    if (marker !== null && marker !== undefined) {
      const px = Math.round(X(marker)) + 0.5;
      ctx.strokeStyle = c.text;
      ctx.lineWidth = 1;
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(px, 0);
      ctx.lineTo(px, plotH);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.restore();
    if (!hasPoints) {
      ctx.fillStyle = c.muted;
      ctx.textAlign = "center";
      ctx.fillText("no data", plotW / 2, plotH / 2);
      ctx.textAlign = "start";
    }
    markPainted(canvas, hasPoints ? "data" : "empty");
  }, [model, dom, sx, sy, plotW, plotH, yTicks, theme, highlight, marker, hasPoints]);

  const local = (e: { clientX: number; clientY: number }): [number, number] => {
    const r = canvasRef.current?.getBoundingClientRect();
    if (!r) return [0, 0];
    return [Math.min(plotW, Math.max(0, e.clientX - r.left)), Math.min(plotH, Math.max(0, e.clientY - r.top))];
  };

  const pick = (px: number, py: number): number => {
    if (model.mode === "scatter") return nearestInPixels(model, sx, sy, px, py, 20);
    const i = nearestByX(model, sx.invert(px));
    if (i < 0) return -1;
    const dx = sx(model.x[i]!) - px;
    return Math.abs(dx) <= 20 ? i : -1;
  };

  const onMove = (e: ReactMouseEvent) => {
    if (drag) return;
    const [px, py] = local(e);
    const i = pick(px, py);
    setHover(i < 0 ? null : { i, tip: { x: e.clientX, y: e.clientY, text: model.tooltip(i) } });
  };

  const onDown = (e: ReactMouseEvent) => {
    if (e.button !== 0) return;
    e.preventDefault();
    const [x0, y0] = local(e);
    let box: DragBox = { x0, y0, x1: x0, y1: y0 };
    setDrag(box);
    setHover(null);
    // The drag is tracked on window so it completes even if the pointer leaves the chart.
    const move = (ev: MouseEvent) => {
      const [x1, y1] = local(ev);
      box = { ...box, x1, y1 };
      setDrag(box);
    };
    const up = () => {
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
      setDrag(null);
      const r = resolveDrag(box, zoom, (p) => sx.invert(p), (p) => sy.invert(p));
      if (r.kind === "click") {
        const i = pick(box.x0, box.y0);
        if (i >= 0) onPointClick?.(i);
      } else onZoom(r.zoom);
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  };

  const zoomed = zoom.x !== null || zoom.y !== null;
  const dragRect = drag
    ? Math.abs(drag.y1 - drag.y0) < 10
      ? { x: Math.min(drag.x0, drag.x1), y: 0, w: Math.abs(drag.x1 - drag.x0), h: plotH }
      : { x: Math.min(drag.x0, drag.x1), y: Math.min(drag.y0, drag.y1), w: Math.abs(drag.x1 - drag.x0), h: Math.abs(drag.y1 - drag.y0) }
    : null;
  const hoverPt = hover && !Number.isNaN(model.y[hover.i]!) ? { x: sx(model.x[hover.i]!), y: sy(model.y[hover.i]!) } : null;
  const tickLabel = { fontFamily: MONO_FONT, fontSize: 11, fill: "var(--muted)" } as const;

  return (
    <div ref={wrapRef} className="zc" style={{ height }}>
      <canvas ref={canvasRef} className="zc-canvas" style={{ left: MARGIN.left, top: TOP }} aria-hidden="true" />
      <svg className="zc-svg" width={width} height={height} role="img" aria-label={label}>
        <AxisLeft
          scale={sy}
          left={MARGIN.left}
          top={TOP}
          tickValues={yTicks}
          tickFormat={(v) => formatTick(Number(v))}
          hideAxisLine
          hideTicks
          tickLabelProps={() => ({ ...tickLabel, textAnchor: "end", dx: -6, dy: "0.33em" })}
        />
        <AxisBottom
          scale={sx}
          left={MARGIN.left}
          top={TOP + plotH}
          tickValues={xTicks}
          tickFormat={(v) => formatTick(Number(v))}
          hideAxisLine
          tickStroke="var(--border)"
          tickLength={4}
          tickLabelProps={() => ({ ...tickLabel, textAnchor: "middle" })}
        />
        <text x={MARGIN.left + plotW} y={height - 2} textAnchor="end" className="zc-axis-title">
          {model.xLabel} →
        </text>
        <text x={4} y={11} className="zc-axis-title">
          ↑ {model.yLabel}
        </text>
        <g transform={`translate(${MARGIN.left},${TOP})`}>
          {hoverPt ? <circle cx={hoverPt.x} cy={hoverPt.y} r={5} className="zc-hover" /> : null}
          {dragRect ? <rect x={dragRect.x} y={dragRect.y} width={dragRect.w} height={dragRect.h} className="zc-drag" /> : null}
          <rect
            width={plotW}
            height={plotH}
            fill="transparent"
            className={onPointClick && hover ? "zc-hit zc-hit-point" : "zc-hit"}
            data-testid="zc-plot"
            onMouseMove={onMove}
            onMouseLeave={() => setHover(null)}
            onMouseDown={onDown}
            onDoubleClick={() => onZoom({ x: null, y: null })}
          />
        </g>
      </svg>
      {zoomed ? (
        <button type="button" className="rv-btn zc-reset" onClick={() => onZoom({ x: null, y: null })}>
          reset zoom
        </button>
      ) : null}
      <Tooltip tip={drag ? null : (hover?.tip ?? null)} />
    </div>
  );
}
