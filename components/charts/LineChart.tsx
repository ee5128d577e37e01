"use client";

/**
 * One line chart = one canvas (marks) + one SVG (visx axes) + one interaction layer.
 * Zoom is controlled by the parent (URL state); this component never stores it.
 *
 * Interactions (spec §1.9, plus): drag-box zoom with the 10 px axis rule, a press under
 * 4 px is a click (opens the point's step when the parent allows), double-click resets,
 * hover shows every series' value at the nearest x and reports it for the synced
 * crosshair of sibling charts.
 */
import { AxisBottom, AxisLeft } from "@visx/axis";
import { scaleLinear } from "@visx/scale";
import { useEffect, useMemo, useRef, useState, type PointerEvent as ReactPointerEvent } from "react";
import { nearestFiniteIndex, reduceM4 } from "@/lib/charts/decimate";
import { dragOverlay, NO_ZOOM, resolveRelease, type PlotBox, type Zoom, clampToPlot } from "@/lib/charts/drag-zoom";
import { niceTicks, xDomain, yDomain, type LineModel } from "@/lib/charts/prepare-line";
import { prepareCanvas } from "@/components/charts/canvas";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { drawLineChart } from "@/components/charts/draw-line";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";

const M = { left: 56, right: 14, top: 10, bottom: 24 };

export interface LineChartProps {
  model: LineModel;
  zoom: Zoom;
  onZoom: (z: Zoom) => void;
  /** axis tick label */
  xFormat: (v: number) => string;
  /** tooltip heading for a point (defaults to xFormat) */
  xTitle?: (v: number) => string;
  /** y tick label; `step` is the tick spacing (for just-enough decimals) */
  yFormat: (v: number, step: number) => string;
  valueFormat: (v: number) => string;
  xTicks: (domain: [number, number], count: number) => number[];
  /** crosshair position from a sibling chart (data x) */
  hoverX?: number | null;
  onHoverX?: (x: number | null) => void;
  /** pinned step marker (data x) */
  markX?: number | null;
  onPointClick?: (x: number) => void;
  isClickable?: (x: number) => boolean;
  clickHint?: string;
  height?: number;
  /** the first answer is still on its way (shown instead of "no data") */
  pending?: boolean;
  label: string;
  lineWidth?: number;
}

interface Hover {
  px: number;
  x: number;
  clientX: number;
  clientY: number;
  clickable: boolean;
}

export function LineChart(props: LineChartProps) {
  const { model, zoom, onZoom, height = 220 } = props;
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(boxRef, 480);
  const theme = useChartTheme();
  const [hover, setHover] = useState<Hover | null>(null);
  // The drag lives in a ref for the handlers (a release right after the press must see it)
  // and in state for drawing the overlay.
  const [drag, setDragState] = useState<{ start: [number, number]; cur: [number, number] } | null>(null);
  const dragRef = useRef<{ start: [number, number]; cur: [number, number] } | null>(null);
  const setDrag = (d: { start: [number, number]; cur: [number, number] } | null) => {
    dragRef.current = d;
    setDragState(d);
  };
  // A click waits out the double-click interval so a double-click (reset) never navigates.
  const clickTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => {
    if (clickTimer.current) clearTimeout(clickTimer.current);
  }, []);

  const plot: PlotBox = { left: M.left, top: M.top, width: Math.max(10, width - M.left - M.right), height: height - M.top - M.bottom };
  const xDom = zoom.x ?? xDomain(model.xExtent, model.xKind) ?? [0, 1];
  const [x0, x1] = xDom;

  const reduced = useMemo(
    () => model.series.map((s) => ({ color: s.color, reduced: reduceM4(s.x, s.y, x0, x1, plot.width) })),
    [model, x0, x1, plot.width],
  );
  const autoY = useMemo(() => yDomain(model.series, x0, x1), [model, x0, x1]);
  const yDom: [number, number] = zoom.y ?? autoY ?? [0, 1];
  const [y0, y1] = yDom;

  const xScale = useMemo(() => scaleLinear<number>({ domain: [x0, x1], range: [plot.left, plot.left + plot.width] }), [x0, x1, plot.left, plot.width]);
  const yScale = useMemo(() => scaleLinear<number>({ domain: [y0, y1], range: [plot.top + plot.height, plot.top] }), [y0, y1, plot.top, plot.height]);
  const yTicks = useMemo(() => niceTicks([y0, y1], 5), [y0, y1]);
  const xTicksFn = props.xTicks;
  const xTicks = useMemo(() => xTicksFn([x0, x1], Math.max(2, Math.min(8, Math.floor(plot.width / 70)))), [xTicksFn, x0, x1, plot.width]);
  const lineWidth = props.lineWidth ?? 1.5;

  // External system: the canvas bitmap. Repaints only when data, domain, size or theme change.
  useEffect(() => {
    const c = canvasRef.current;
    if (!c || width === 0) return;
    const ctx = prepareCanvas(c, width, height);
    if (!ctx) return;
    drawLineChart(
      ctx,
      { width, height, left: plot.left, top: plot.top, plotW: plot.width, plotH: plot.height },
      reduced,
      (v) => xScale(v),
      (v) => yScale(v),
      yTicks,
      theme,
      lineWidth,
    );
  }, [reduced, xScale, yScale, yTicks, theme, width, height, plot.left, plot.top, plot.width, plot.height, lineWidth]);

  // The axes only change with the domain or size; hover and drag re-render the chart
  // often (crosshair sync), so the SVG is memoised. The formatters are pure per chart.
  const { xFormat, yFormat } = props;
  const axes = useMemo(
    () => (
      <svg className="chart-axes" width={width} height={height} aria-hidden="true">
        <AxisLeft scale={yScale} left={plot.left} tickValues={yTicks} tickFormat={(v) => yFormat(Number(v), yTicks.length > 1 ? yTicks[1]! - yTicks[0]! : Math.abs(y1 - y0) / 5)} hideAxisLine hideTicks tickLabelProps={{ dx: -4, fontSize: 11, textAnchor: "end", verticalAnchor: "middle" }} />
        <AxisBottom scale={xScale} top={plot.top + plot.height} tickValues={xTicks} tickFormat={(v) => xFormat(Number(v))} hideTicks tickLabelProps={{ fontSize: 11, textAnchor: "middle", dy: 2 }} />
      </svg>
    ),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- formatters are recreated per render but pure for a chart; the domain and ticks decide the output
    [width, height, xScale, yScale, xTicks, yTicks, plot.left, plot.top, plot.height, y0, y1],
  );

  const reducedAny = reduced.some((r) => r.reduced.reduced);
  const inputCount = reduced.reduce((a, r) => a + r.reduced.inputCount, 0);
  const drawnCount = reduced.reduce((a, r) => a + r.reduced.length, 0);
  const hasPoints = model.points > 0;
  const inWindow = autoY !== null;

  const local = (e: { clientX: number; clientY: number }): [number, number] => {
    const r = boxRef.current!.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };

  /** Nearest drawn data x to a pixel, within `maxPx`; null when nothing is close. */
  const nearestX = (px: number, maxPx: number): number | null => {
    const xv = xScale.invert(px);
    let best: number | null = null;
    let bestD = Number.POSITIVE_INFINITY;
    for (const s of model.series) {
      const i = nearestFiniteIndex(s.x, s.y, xv);
      if (i < 0) continue;
      const d = Math.abs(xScale(s.x[i]!) - px);
      if (d < bestD) {
        bestD = d;
        best = s.x[i]!;
      }
    }
    return best !== null && bestD <= maxPx ? best : null;
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
    if (px < plot.left || px > plot.left + plot.width || py < plot.top - 4 || py > plot.top + plot.height + 4) {
      if (hover) {
        setHover(null);
        props.onHoverX?.(null);
      }
      return;
    }
    const x = nearestX(px, model.series.length > 1 ? 30 : 20);
    if (x === null) {
      setHover(null);
      props.onHoverX?.(null);
      return;
    }
    setHover({ px, x, clientX: e.clientX, clientY: e.clientY, clickable: !!props.onPointClick && (props.isClickable?.(x) ?? true) });
    props.onHoverX?.(x);
  };

  const onPointerUp = (e: ReactPointerEvent<HTMLDivElement>) => {
    const d = dragRef.current;
    if (!d) return;
    const end = clampToPlot(...local(e), plot);
    setDrag(null);
    const r = resolveRelease(d.start, end, zoom, (px) => xScale.invert(px), (py) => yScale.invert(py));
    if (r.kind === "zoom") onZoom(r.zoom);
    else if (r.kind === "click" && props.onPointClick) {
      const x = nearestX(r.px, 20);
      const open = props.onPointClick;
      if (x !== null && (props.isClickable?.(x) ?? true)) {
        if (clickTimer.current) clearTimeout(clickTimer.current);
        clickTimer.current = setTimeout(() => {
          clickTimer.current = null;
          open(x);
        }, 260);
      }
    }
  };

  const onLeave = () => {
    if (dragRef.current) return;
    setHover(null);
    props.onHoverX?.(null);
  };

  const crossX = hover ? hover.x : (props.hoverX ?? null);
  const crossPx = crossX !== null && crossX >= x0 && crossX <= x1 ? xScale(crossX) : null;
  const markPx = props.markX !== null && props.markX !== undefined && props.markX >= x0 && props.markX <= x1 ? xScale(props.markX) : null;
  const ov = drag ? dragOverlay(drag.start, drag.cur, plot) : null;

  let tip: TooltipState | null = null;
  if (hover) {
    const rows = model.series
      .map((s) => {
        const i = nearestFiniteIndex(s.x, s.y, hover.x);
        return i >= 0 && s.x[i] === hover.x ? { s, v: s.y[i]! } : null;
      })
      .filter((r): r is NonNullable<typeof r> => r !== null)
      .sort((a, b) => b.v - a.v)
      .slice(0, 12);
    tip = {
      clientX: hover.clientX,
      clientY: hover.clientY,
      content: (
        <>
          <div className="tip-title">{(props.xTitle ?? props.xFormat)(hover.x)}</div>
          {rows.map(({ s, v }) => (
            <div key={s.id} className="tip-row">
              {model.series.length > 1 ? <span className="swatch" style={{ background: s.color }} /> : null}
              <span className="tip-label">{s.label}</span>
              <span className="tip-value">{props.valueFormat(v)}</span>
            </div>
          ))}
          {hover.clickable && props.clickHint ? <div className="tip-hint">{props.clickHint}</div> : null}
        </>
      ),
    };
  }

  return (
    <div
      ref={boxRef}
      className="line-chart"
      style={{ height }}
      data-testid="line-chart"
      data-x0={x0}
      data-x1={x1}
      data-y0={y0}
      data-y1={y1}
      data-points={model.points}
      data-last-x={model.xExtent?.[1] ?? ""}
      data-reduced={reducedAny ? "true" : "false"}
      data-zoomed={zoom.x || zoom.y ? "true" : "false"}
      role="img"
      aria-label={`${props.label}: ${model.points} points${model.xExtent ? `, x ${(props.xTitle ?? props.xFormat)(model.xExtent[0])} to ${(props.xTitle ?? props.xFormat)(model.xExtent[1])}` : ""}`}
    >
      <canvas ref={canvasRef} style={{ width, height }} aria-hidden="true" />
      {axes}
      {markPx !== null ? <div className="chart-mark" style={{ left: markPx, top: plot.top, height: plot.height }} /> : null}
      {crossPx !== null ? <div className="chart-cross" style={{ left: crossPx, top: plot.top, height: plot.height }} /> : null}
      {ov ? <div className="chart-drag" style={{ left: ov.x, top: ov.y, width: ov.w, height: ov.h }} /> : null}
      {!hasPoints ? (
        <div className="chart-empty">{props.pending ? "loading…" : "no data"}</div>
      ) : !inWindow && !zoom.y ? (
        <div className="chart-empty">no data in this range · double-click to reset</div>
      ) : null}
      {reducedAny ? (
        <span className="chart-reduced" title={`${inputCount.toLocaleString()} points in view drawn as a per-pixel min/max envelope (${drawnCount.toLocaleString()} vertices); spikes are kept. Zoom in for raw points.`}>
          min/max · {inputCount.toLocaleString()} pts
        </span>
      ) : null}
      <div
        className="chart-hit"
        style={{ cursor: hover?.clickable ? "pointer" : "crosshair" }}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={() => setDrag(null)}
        onPointerLeave={onLeave}
        onDoubleClick={() => {
          if (clickTimer.current) clearTimeout(clickTimer.current);
          clickTimer.current = null;
          onZoom(NO_ZOOM);
        }}
      />
      <ChartTooltip tip={tip} />
    </div>
  );
}
