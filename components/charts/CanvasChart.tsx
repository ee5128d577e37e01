"use client";

/**
 * The one chart of every view (docs/charts.md): a core ChartModel drawn as lines or a
 * scatter on one canvas, visx axes in one SVG, HTML overlays (crosshair, marker, drag
 * box, hovered dot) and one hit layer over the plot. Zoom is controlled by the parent
 * (URL or view state); this component never stores it.
 *
 * Interactions (docs/views.md 1.9): drag-box zoom with the 10 px axis rule, a press
 * under 4 px is a click (it opens the point, once the double-click interval has passed,
 * so a double-click — reset — never navigates), hover shows the tooltip and reports its
 * x for the synced crosshair of sibling charts.
 *
 * The canvas is created, repainted and stamped in one place: the paint effect below.
 * It repaints only when the model, the domain, the size or the theme change, then sets
 * `data-painted` ("data" or "empty"), which the e2e suite and the bench wait on.
 */
import { AxisBottom, AxisLeft } from "@visx/axis";
import { scaleLinear } from "@visx/scale";
import { useEffect, useMemo, useRef, useState, type PointerEvent as ReactPointerEvent, type ReactNode } from "react";
import { viewDomain } from "@/lib/charts/core/bounds";
import { dragOverlay, resolveRelease } from "@/lib/charts/core/drag";
import { nearestFiniteIndex, nearestInPixels, reduceM4 } from "@/lib/charts/core/envelope";
import { formatTick, formatValue } from "@/lib/charts/core/format";
import type { ChartModel } from "@/lib/charts/core/model";
import { clampToPlot, isZoomed, NO_ZOOM, type PlotBox, type Range, type Zoom } from "@/lib/charts/core/range";
import { niceTicks, tickStep } from "@/lib/charts/core/ticks";
import { markPainted, prepareCanvas } from "@/components/charts/canvas";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { drawChart } from "@/components/charts/draw";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import "@/components/charts/chart.css";

const MARGIN = { left: 56, right: 14, top: 10, bottom: 24 };
/** Extra room when the model carries axis titles. */
const TITLE_TOP = 8;
const TITLE_BOTTOM = 12;
/** A double-click must not also open the point under it. */
const CLICK_DELAY_MS = 260;

/** A point under the pointer: series k, index i. */
export interface PointHit {
  series: number;
  i: number;
  x: number;
}

export interface CanvasChartProps {
  model: ChartModel;
  zoom: Zoom;
  onZoom: (z: Zoom) => void;
  /** accessible name (the chart is role="img") */
  label: string;
  height?: number;
  /** x tick label (default: the axis rule of lib/charts/core/format) */
  xFormat?: (v: number) => string;
  /** tooltip heading for an x (defaults to xFormat) */
  xTitle?: (v: number) => string;
  /** y tick label; `step` is the tick spacing (for just-enough decimals) */
  yFormat?: (v: number, step: number) => string;
  valueFormat?: (v: number) => string;
  xTicks?: (domain: Range, count: number) => number[];
  /** crosshair position from a sibling chart (data x) */
  hoverX?: number | null;
  onHoverX?: (x: number | null) => void;
  /** pinned marker (data x): the step cursor, the token hovered in the strip */
  markX?: number | null;
  onPointClick?: (hit: PointHit) => void;
  isClickable?: (hit: PointHit) => boolean;
  clickHint?: string;
  /** the first answer is still on its way (shown instead of "no data") */
  pending?: boolean;
  lineWidth?: number;
  /** a "reset zoom" button while zoomed (views without a toolbar pill) */
  resetButton?: boolean;
}

interface Hover {
  hit: PointHit;
  clientX: number;
  clientY: number;
  clickable: boolean;
}

type Drag = { start: [number, number]; cur: [number, number] };

export function CanvasChart(props: CanvasChartProps) {
  const { model, zoom, onZoom, height = 220 } = props;
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(boxRef, 480);
  const theme = useChartTheme();
  const [hover, setHover] = useState<Hover | null>(null);
  // The drag lives in a ref for the handlers (a release right after the press must see
  // it) and in state for drawing the overlay; both are written by handlers only.
  const [drag, setDragState] = useState<Drag | null>(null);
  const dragRef = useRef<Drag | null>(null);
  const setDrag = (d: Drag | null) => {
    dragRef.current = d;
    setDragState(d);
  };
  const clickTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (clickTimer.current) clearTimeout(clickTimer.current);
    },
    [],
  );

  const titles = model.axisTitles;
  const top = MARGIN.top + (titles ? TITLE_TOP : 0);
  const bottom = MARGIN.bottom + (titles ? TITLE_BOTTOM : 0);
  const plotW = Math.max(10, width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(10, height - top - bottom);
  const plot: PlotBox = useMemo(() => ({ left: MARGIN.left, top, width: plotW, height: plotH }), [top, plotW, plotH]);

  const dom = useMemo(() => viewDomain(model, zoom), [model, zoom]);
  const [x0, x1] = dom.x;
  const [y0, y1] = dom.y;
  const reduced = useMemo(() => (model.mode === "line" ? model.series.map((s) => reduceM4(s.x, s.y, x0, x1, plot.width)) : []), [model, x0, x1, plot.width]);

  const xScale = useMemo(() => scaleLinear<number>({ domain: [x0, x1], range: [plot.left, plot.left + plot.width] }), [x0, x1, plot]);
  const yScale = useMemo(() => scaleLinear<number>({ domain: [y0, y1], range: [plot.top + plot.height, plot.top] }), [y0, y1, plot]);
  const yTicks = useMemo(() => niceTicks([y0, y1], 5), [y0, y1]);
  const xTicksFn = props.xTicks ?? niceTicks;
  const xTicks = useMemo(() => xTicksFn([x0, x1], Math.max(2, Math.min(8, Math.floor(plot.width / 70)))), [xTicksFn, x0, x1, plot.width]);
  const lineWidth = props.lineWidth ?? 1.5;

  // External system: the canvas bitmap. The one place a chart paints and stamps it.
  useEffect(() => {
    const c = canvasRef.current;
    if (!c || width === 0) return;
    const ctx = prepareCanvas(c, width, height);
    if (ctx) drawChart(ctx, { model, plot, reduced, sx: xScale, sy: yScale, yTicks, theme, lineWidth });
    markPainted(c, model.points > 0 ? "data" : "empty");
  }, [model, plot, reduced, xScale, yScale, yTicks, theme, width, height, lineWidth]);

  const xFormat = props.xFormat ?? formatTick;
  const yFormat = props.yFormat ?? formatTick;
  const xTitle = props.xTitle ?? xFormat;
  // Hover and drag re-render the chart often (crosshair sync), so the SVG is memoised on
  // what decides it; the formatters are pure per chart.
  const axes = useMemo(
    () => (
      <svg className="chart-axes" width={width} height={height} aria-hidden="true">
        <AxisLeft scale={yScale} left={plot.left} tickValues={yTicks} tickFormat={(v) => yFormat(Number(v), tickStep(yTicks, [y0, y1]))} hideAxisLine hideTicks tickLabelProps={{ dx: -4, fontSize: 11, textAnchor: "end", verticalAnchor: "middle" }} />
        <AxisBottom scale={xScale} top={plot.top + plot.height} tickValues={xTicks} tickFormat={(v) => xFormat(Number(v))} hideTicks tickLabelProps={{ fontSize: 11, textAnchor: "middle", dy: 2 }} />
        {titles ? (
          <>
            <text className="chart-axis-title" x={plot.left + plot.width} y={height - 2} textAnchor="end">
              {titles.x} →
            </text>
            <text className="chart-axis-title" x={4} y={11}>
              ↑ {titles.y}
            </text>
          </>
        ) : null}
      </svg>
    ),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- formatters are recreated per render but pure for a chart; the domain and ticks decide the output
    [width, height, xScale, yScale, xTicks, yTicks, plot, y0, y1, titles],
  );

  const reducedAny = reduced.some((r) => r.reduced);
  const inputCount = reduced.reduce((a, r) => a + r.inputCount, 0);
  const drawnCount = reduced.reduce((a, r) => a + r.length, 0);

  const local = (e: { clientX: number; clientY: number }): [number, number] => {
    const r = boxRef.current!.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };

  /** The point under a pixel: nearest x (line, within maxPx) or nearest dot (scatter, 20 px). */
  const pick = (px: number, py: number, maxPx: number): PointHit | null => {
    if (model.mode === "scatter") {
      let best: PointHit | null = null;
      model.series.forEach((s, k) => {
        const i = nearestInPixels(s.x, s.y, xScale, yScale, px, py, 20);
        if (i >= 0 && !best) best = { series: k, i, x: s.x[i]! };
      });
      return best;
    }
    const xv = xScale.invert(px);
    let best: PointHit | null = null;
    let bestD = Number.POSITIVE_INFINITY;
    model.series.forEach((s, k) => {
      const i = nearestFiniteIndex(s.x, s.y, xv);
      if (i < 0) return;
      const d = Math.abs(xScale(s.x[i]!) - px);
      if (d < bestD) {
        bestD = d;
        best = { series: k, i, x: s.x[i]! };
      }
    });
    return bestD <= maxPx ? best : null;
  };
  const clickable = (hit: PointHit) => !!props.onPointClick && (props.isClickable?.(hit) ?? true);
  const clearHover = () => {
    setHover(null);
    props.onHoverX?.(null);
  };

  const onPointerDown = (e: ReactPointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    const p = clampToPlot(...local(e), plot);
    e.currentTarget.setPointerCapture(e.pointerId);
    setDrag({ start: p, cur: p });
    setHover(null);
  };

  const onPointerMove = (e: ReactPointerEvent<HTMLDivElement>) => {
    const [px, py] = local(e);
    const d = dragRef.current;
    if (d) {
      setDrag({ start: d.start, cur: clampToPlot(px, py, plot) });
      return;
    }
    const hit = pick(px, py, model.series.length > 1 ? 30 : 20);
    if (!hit) {
      if (hover) clearHover();
      return;
    }
    setHover({ hit, clientX: e.clientX, clientY: e.clientY, clickable: clickable(hit) });
    props.onHoverX?.(hit.x);
  };

  const onPointerUp = (e: ReactPointerEvent<HTMLDivElement>) => {
    const d = dragRef.current;
    if (!d) return;
    const end = clampToPlot(...local(e), plot);
    setDrag(null);
    const r = resolveRelease(d.start, end, zoom, (px) => xScale.invert(px), (py) => yScale.invert(py));
    if (r.kind === "zoom") onZoom(r.zoom);
    else if (r.kind === "click" && props.onPointClick) {
      const hit = pick(r.px, r.py, 20);
      const open = props.onPointClick;
      if (hit && clickable(hit)) {
        if (clickTimer.current) clearTimeout(clickTimer.current);
        clickTimer.current = setTimeout(() => {
          clickTimer.current = null;
          open(hit);
        }, CLICK_DELAY_MS);
      }
    }
  };

  const onDoubleClick = () => {
    if (clickTimer.current) clearTimeout(clickTimer.current);
    clickTimer.current = null;
    onZoom(NO_ZOOM);
  };

  const inX = (v: number | null | undefined): number | null => (v !== null && v !== undefined && v >= x0 && v <= x1 ? xScale(v) : null);
  const crossPx = model.mode === "line" ? inX(hover ? hover.hit.x : props.hoverX) : null;
  const markPx = inX(props.markX);
  const hovered = hover && model.mode === "scatter" ? model.series[hover.hit.series] : undefined;
  const dot = hover && hovered ? { x: xScale(hovered.x[hover.hit.i]!), y: yScale(hovered.y[hover.hit.i]!) } : null;
  const ov = drag ? dragOverlay(drag.start, drag.cur, plot) : null;
  const tip: TooltipState | null = hover && !drag ? { clientX: hover.clientX, clientY: hover.clientY, content: tooltipContent(props, hover, xTitle) } : null;
  const extentText = model.xExtent ? `, x ${xTitle(model.xExtent[0])} to ${xTitle(model.xExtent[1])}` : "";

  return (
    <div
      ref={boxRef}
      className="canvas-chart"
      style={{ height }}
      data-testid="chart"
      data-mode={model.mode}
      data-x0={x0}
      data-x1={x1}
      data-y0={y0}
      data-y1={y1}
      data-points={model.points}
      data-last-x={model.xExtent?.[1] ?? ""}
      data-reduced={reducedAny ? "true" : "false"}
      data-zoomed={isZoomed(zoom) ? "true" : "false"}
      role="img"
      aria-label={`${props.label}: ${model.points} points${extentText}`}
    >
      <canvas ref={canvasRef} style={{ width, height }} aria-hidden="true" />
      {axes}
      {markPx !== null ? <div className="chart-mark" style={{ left: markPx, top: plot.top, height: plot.height }} /> : null}
      {crossPx !== null ? <div className="chart-cross" style={{ left: crossPx, top: plot.top, height: plot.height }} /> : null}
      {dot ? <div className="chart-dot" style={{ left: dot.x, top: dot.y }} /> : null}
      {ov ? <div className="chart-drag" style={{ left: ov.x, top: ov.y, width: ov.w, height: ov.h }} /> : null}
      {model.points === 0 ? (
        <div className="chart-empty">{props.pending ? "loading…" : "no data"}</div>
      ) : !dom.inWindow && !zoom.y ? (
        <div className="chart-empty">no data in this range · double-click to reset</div>
      ) : null}
      {reducedAny ? (
        <span className="chart-reduced" title={`${inputCount.toLocaleString()} points in view drawn as a per-pixel min/max envelope (${drawnCount.toLocaleString()} vertices); spikes are kept. Zoom in for raw points.`}>
          min/max · {inputCount.toLocaleString()} pts
        </span>
      ) : null}
      <div
        className="chart-hit"
        data-testid="chart-plot"
        style={{ left: plot.left, top: plot.top, width: plot.width, height: plot.height, cursor: hover?.clickable ? "pointer" : undefined }}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={() => setDrag(null)}
        onPointerLeave={() => {
          if (!dragRef.current) clearHover();
        }}
        onDoubleClick={onDoubleClick}
      />
      {props.resetButton && isZoomed(zoom) ? (
        <button type="button" className="rv-btn chart-reset" onClick={() => onZoom(NO_ZOOM)}>
          reset zoom
        </button>
      ) : null}
      <ChartTooltip tip={tip} />
    </div>
  );
}

/** The model's own text for a point, else every series' value at the hovered x (top 12). */
function tooltipContent(props: CanvasChartProps, hover: Hover, xTitle: (v: number) => string): ReactNode {
  const { model } = props;
  const hint = hover.clickable && props.clickHint ? <div className="tip-hint">{props.clickHint}</div> : null;
  if (model.tooltip) {
    return (
      <>
        {model.tooltip(hover.hit.i)}
        {hint}
      </>
    );
  }
  const valueFormat = props.valueFormat ?? formatValue;
  const x = hover.hit.x;
  const rows = model.series
    .map((s) => {
      const i = nearestFiniteIndex(s.x, s.y, x);
      return i >= 0 && s.x[i] === x ? { s, v: s.y[i]! } : null;
    })
    .filter((r): r is NonNullable<typeof r> => r !== null)
    .sort((a, b) => b.v - a.v)
    .slice(0, 12);
  return (
    <>
      <div className="tip-title">{xTitle(x)}</div>
      {rows.map(({ s, v }) => (
        <div key={s.id} className="tip-row">
          {model.series.length > 1 ? <span className="swatch" style={{ background: s.color ?? undefined }} /> : null}
          <span className="tip-label">{s.label}</span>
          <span className="tip-value">{valueFormat(v)}</span>
        </div>
      ))}
      {hint}
    </>
  );
}
