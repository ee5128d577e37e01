"use client";

/**
 * The one chart of every view (docs/charts.md): a core ChartModel drawn as lines or a
 * scatter on one canvas, plain-SVG axes in one SVG (components/charts/axes.tsx), HTML overlays (crosshair, marker, drag
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
 * `data-painted` ("data" or "empty"), which the e2e suite and the bench wait on. What a
 * person sees is the bitmap as an `<img>` (CanvasImage, components/charts/canvas.ts): a
 * page of canvases costs every scroll frame a bitmap hand-off per canvas.
 *
 * Controls (docs/charts.md §6): `smoothing` draws a smoothed line over the faint raw one,
 * `logY` draws y in log10 space (non-positive values hidden and counted), a constant
 * series is centred on one labelled gridline with a "constant v over the run" caption,
 * `exportName` adds CSV / PNG downloads of what the chart shows. `deferred` (an offscreen
 * card, §7) renders a light placeholder stamped `data-painted="deferred"`.
 */
import { scaleLinear } from "@visx/scale";
import { AxisBottom, AxisLeftLabels } from "@/components/charts/axes";
import { useEffect, useMemo, useRef, useState, type PointerEvent as ReactPointerEvent, type ReactNode } from "react";
import { constantValue, viewDomain } from "@/lib/charts/core/bounds";
import { fileStem, seriesCsv } from "@/lib/charts/core/csv";
import { fromLog, logColumn, logTicks, toLogModel } from "@/lib/charts/core/logscale";
import { encodeSmoothing, NO_SMOOTHING, smooth, type Smoothing } from "@/lib/charts/core/smooth";
import { dragOverlay, resolveRelease } from "@/lib/charts/core/drag";
import { nearestFiniteIndex, nearestInPixels, reduceM4 } from "@/lib/charts/core/envelope";
import { formatExact, formatTick, formatValue } from "@/lib/charts/core/format";
import type { ChartModel } from "@/lib/charts/core/model";
import { clampToPlot, isZoomed, NO_ZOOM, type PlotBox, type Range, type Zoom } from "@/lib/charts/core/range";
import { niceTicks, tickStep } from "@/lib/charts/core/ticks";
import { CanvasImage, markPainted, prepareCanvas } from "@/components/charts/canvas";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { drawChart } from "@/components/charts/draw";
import { chartPng, downloadBlob } from "@/components/charts/export";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useBoxWidth } from "@/components/charts/use-element-width";
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
  /** line mode: a smoothed line over the faint raw one */
  smoothing?: Smoothing;
  /** log-scale y (the zoom's y range is then in log10 units) */
  logY?: boolean;
  /** CSV / PNG download buttons; the file name stem */
  exportName?: string;
  /** CSV columns: the x column's name and an extra per-point column (the step on a time axis) */
  csv?: { xName: string; extra?: { name: string; columns: readonly (ArrayLike<number> | null)[] } };
  /** offscreen and never drawn yet (or waiting for its turn in the build queue): a placeholder of the same height, no work */
  deferred?: boolean;
  /** the placeholder's text (e.g. "loading…" for a card on screen waiting for its data or turn) */
  deferredText?: string;
  /** the box's width when the caller already measured it (the build queue): no measuring at mount */
  knownWidth?: number;
}

interface Hover {
  hit: PointHit;
  clientX: number;
  clientY: number;
  clickable: boolean;
}

type Drag = { start: [number, number]; cur: [number, number] };

export function CanvasChart(props: CanvasChartProps) {
  if (props.deferred) return <DeferredChart label={props.label} height={props.height} text={props.deferredText} />;
  return <ChartBody {...props} />;
}

/** The placeholder of a chart not drawn yet (docs/charts.md §7): same height, stamped `deferred`. */
export function DeferredChart({ label, height = 220, text }: { label: string; height?: number; text?: string }) {
  return (
    <div className="canvas-chart chart-deferred" style={{ height }} data-testid="chart" data-deferred="true" role="img" aria-label={`${label}: ${text ? text : "not drawn yet (off screen)"}`}>
      <canvas data-painted="deferred" aria-hidden="true" style={{ width: "100%", height }} />
      {text ? <div className="chart-empty">{text}</div> : null}
    </div>
  );
}

function ChartBody(props: CanvasChartProps) {
  const { zoom, onZoom, height = 220 } = props;
  const rawModel = props.model;
  const logY = !!props.logY;
  const smoothing = props.smoothing ?? NO_SMOOTHING;
  const smKey = encodeSmoothing(smoothing);
  // log10 space for a log axis; the smoothed line comes from the raw values (then logged)
  const logged = useMemo(() => (logY ? toLogModel(rawModel) : { model: rawModel, hidden: 0 }), [rawModel, logY]);
  const model = logged.model;
  const smoothedRaw = useMemo(
    () => (rawModel.mode === "line" && smKey ? rawModel.series.map((s) => smooth(s.y, smoothing)) : null),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- smKey is the smoothing's value
    [rawModel, smKey],
  );
  const smoothed = useMemo(() => (smoothedRaw && logY ? smoothedRaw.map((y) => (y ? logColumn(y).y : null)) : smoothedRaw), [smoothedRaw, logY]);
  // constant over the run: judged on the raw values (a log axis hiding the zeros of a
  // 0/0.02 series must not make it "constant"); on a log axis its gridline is at log10(v)
  const rawConstant = useMemo(() => constantValue(rawModel), [rawModel]);
  const constant = rawConstant === null ? null : logY ? (rawConstant > 0 ? Math.log10(rawConstant) : null) : rawConstant;
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  // what a person sees once drawn: the bitmap as an image (components/charts/canvas.ts)
  const imgRef = useRef<HTMLImageElement>(null);
  const imageRef = useRef<CanvasImage | null>(null);
  useEffect(() => () => imageRef.current?.dispose(), []);
  // measured before the first paint: the canvas is drawn once, at its real width
  const measured = useBoxWidth(boxRef, 480, props.knownWidth);
  const width = measured ?? 480;
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
  // nothing is reduced or drawn before the width is known (the layout effect re-renders at once)
  const sized = measured !== null;
  const reduced = useMemo(() => (sized && model.mode === "line" ? model.series.map((s) => reduceM4(s.x, s.y, x0, x1, plot.width)) : []), [sized, model, x0, x1, plot.width]);
  const reducedSmooth = useMemo(
    () => (sized && smoothed ? smoothed.map((y, k) => (y ? reduceM4(model.series[k]!.x, y, x0, x1, plot.width) : null)) : null),
    [sized, smoothed, model, x0, x1, plot.width],
  );

  const xScale = useMemo(() => scaleLinear<number>({ domain: [x0, x1], range: [plot.left, plot.left + plot.width] }), [x0, x1, plot]);
  const yScale = useMemo(() => scaleLinear<number>({ domain: [y0, y1], range: [plot.top + plot.height, plot.top] }), [y0, y1, plot]);
  // a constant chart (not y-zoomed) has one gridline, at its value (issue #15 defect 8)
  const flatTick = constant !== null && !zoom.y;
  const yTicks = useMemo(() => (flatTick && constant !== null ? [constant] : logY ? logTicks([y0, y1], 5) : niceTicks([y0, y1], 5)), [flatTick, constant, logY, y0, y1]);
  const xTicksFn = props.xTicks ?? niceTicks;
  const xTicks = useMemo(() => xTicksFn([x0, x1], Math.max(2, Math.min(8, Math.floor(plot.width / 70)))), [xTicksFn, x0, x1, plot.width]);
  const lineWidth = props.lineWidth ?? 1.5;

  // External system: the canvas bitmap. The one place a chart paints and stamps it.
  useEffect(() => {
    const c = canvasRef.current;
    if (!c || !sized || width === 0) return;
    const ctx = prepareCanvas(c, width, height);
    if (ctx) drawChart(ctx, { model, plot, reduced, sx: xScale, sy: yScale, yTicks, theme, lineWidth, smooth: reducedSmooth });
    // what the bitmap shows, for tests that assert what a person sees
    const layers = reducedSmooth?.some((r) => r !== null) ? "raw,smooth" : "raw";
    if (c.dataset.layers !== layers) c.dataset.layers = layers;
    const stamp = model.points > 0 ? "data" : "empty";
    const img = imgRef.current;
    if (ctx && img) (imageRef.current ??= new CanvasImage(c, img)).painted(stamp);
    else markPainted(c, stamp);
  }, [model, plot, reduced, reducedSmooth, xScale, yScale, yTicks, theme, sized, width, height, lineWidth]);

  const xFormat = props.xFormat ?? formatTick;
  const linearYFormat = props.yFormat ?? formatTick;
  // on a log axis, ticks are log10 positions labelled with their value
  const yFormat = logY ? (v: number) => linearYFormat(fromLog(v), logLabelStep(fromLog(v), yTicks)) : linearYFormat;
  const linearValueFormat = props.valueFormat ?? formatValue;
  const valueFormat = logY ? (v: number) => linearValueFormat(fromLog(v)) : linearValueFormat;
  const xTitle = props.xTitle ?? xFormat;
  // Hover and drag re-render the chart often (crosshair sync), so the SVG is memoised on
  // what decides it; the formatters are pure per chart.
  const axes = useMemo(
    () =>
      !sized ? null : (
      <svg className="chart-axes" width={width} height={height} aria-hidden="true">
        <AxisLeftLabels left={plot.left} scale={yScale} ticks={yTicks} format={(v) => yFormat(v, tickStep(yTicks, [y0, y1]))} />
        <AxisBottom top={plot.top + plot.height} range={[plot.left, plot.left + plot.width]} scale={xScale} ticks={xTicks} format={xFormat} />
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
    [sized, width, height, xScale, yScale, xTicks, yTicks, plot, y0, y1, titles, logY],
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
  const tip: TooltipState | null = hover && !drag ? { clientX: hover.clientX, clientY: hover.clientY, content: tooltipContent(model, props, hover, xTitle, valueFormat) } : null;

  const downloadCsv = () => {
    const text = seriesCsv(rawModel, { xName: props.csv?.xName ?? "x", smoothed: smoothedRaw ?? undefined, extra: props.csv?.extra });
    downloadBlob(new Blob([text], { type: "text/csv;charset=utf-8" }), `${fileStem(props.exportName ?? props.label)}.csv`);
  };
  const downloadPng = async () => {
    const c = canvasRef.current;
    const svg = boxRef.current?.querySelector("svg.chart-axes");
    if (!c || !(svg instanceof SVGSVGElement)) return;
    const blob = await chartPng(c, svg, width, height, theme);
    if (blob) downloadBlob(blob, `${fileStem(props.exportName ?? props.label)}.png`);
  };
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
      data-y-scale={logY ? "log" : "linear"}
      data-smoothing={smKey ?? "none"}
      data-constant={rawConstant ?? undefined}
      data-y-ticks={yTicks.map((t) => yFormat(t, tickStep(yTicks, [y0, y1]))).join("|")}
      role="img"
      aria-label={`${props.label}: ${model.points} points${extentText}`}
    >
      {/* the drawn bitmap as an image: see CanvasImage (components/charts/canvas.ts) */}
      <img ref={imgRef} className="chart-img" alt="" aria-hidden="true" draggable={false} decoding="sync" style={{ width, height }} />
      <canvas ref={canvasRef} className="chart-canvas" style={{ width, height }} aria-hidden="true" />
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
      {rawConstant !== null && rawModel.points > 0 ? (
        <span className="chart-note chart-constant" data-testid="chart-constant" style={{ left: plot.left + 6, top: plot.top + plot.height / 2 - 18 }}>
          constant {formatExact(rawConstant)} over the run
        </span>
      ) : null}
      {logged.hidden > 0 ? (
        <span className="chart-note chart-log-hidden" data-testid="chart-log-hidden" style={{ left: plot.left + 6, top: plot.top + plot.height - 16 }}>
          {logged.hidden.toLocaleString()} value{logged.hidden === 1 ? "" : "s"} ≤ 0 hidden (log scale)
        </span>
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
      {props.exportName ? (
        <span className="chart-export" style={{ left: plot.left + 4 }}>
          <button type="button" className="link-btn" onClick={downloadCsv} title="Download this chart's series as CSV" aria-label={`Download ${props.label} as CSV`}>
            CSV
          </button>
          <button type="button" className="link-btn" onClick={() => void downloadPng()} title="Download this chart as PNG" aria-label={`Download ${props.label} as PNG`}>
            PNG
          </button>
        </span>
      ) : null}
      <ChartTooltip tip={tip} />
    </div>
  );
}

/** The model's own text for a point, else every series' value at the hovered x (top 12). */
function tooltipContent(model: ChartModel, props: CanvasChartProps, hover: Hover, xTitle: (v: number) => string, valueFormat: (v: number) => string): ReactNode {
  const hint = hover.clickable && props.clickHint ? <div className="tip-hint">{props.clickHint}</div> : null;
  if (model.tooltip) {
    return (
      <>
        {model.tooltip(hover.hit.i)}
        {hint}
      </>
    );
  }
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

/**
 * Label precision of a log-axis tick: a 1-2-5 tick is printed to its own magnitude (0.2,
 * 50, 1000); ticks of the linear fallback (less than one 1-2-5 step in view) to their
 * spacing, so neighbours stay distinct.
 */
function logLabelStep(v: number, ticks: readonly number[]): number {
  const a = Math.abs(v);
  if (!(a > 0)) return 1;
  const m = a / Math.pow(10, Math.floor(Math.log10(a) + 1e-9));
  if ([1, 2, 5, 10].some((k) => Math.abs(m - k) < 1e-6)) return a;
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < ticks.length; i++) gap = Math.min(gap, Math.abs(fromLog(ticks[i]!) - fromLog(ticks[i - 1]!)));
  return Number.isFinite(gap) ? gap : a / 10;
}

