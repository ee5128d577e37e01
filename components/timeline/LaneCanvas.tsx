"use client";

/**
 * Per-GPU lanes: a sticky time axis (plain SVG, components/charts/axes.tsx) over one canvas per lane.
 * Rows are virtualised: the box is as tall as every selected lane, and only the page of
 * rows in sight (`offset`, from the rows this box reports through `onRows`) has canvases
 * and data, so 512 selected lanes cost what 32 do. Lanes redraw in the
 * next animation frame when the viewport moves, and lanes scrolled out of sight skip
 * those frames until they come back or the view rests (IntersectionObserver), so a
 * 32-lane pan stays cheap. New data paints every lane at once.
 *
 * Interactions: drag = pan; Ctrl/⌘ + wheel (or plain wheel once the lanes have focus) =
 * zoom around the cursor; double-click = latest window; hover = lane inspection.
 */
import { scaleLinear } from "@visx/scale";
import { memo, useEffect, useEffectEvent, useRef, useState, type PointerEvent as ReactPointerEvent } from "react";
import { formatClock, formatElapsed, formatValue } from "@/lib/charts/core/format";
import type { RowsInView } from "@/lib/charts/lane-selection";
import { gpuSampleAt, overlayAt, phasesAt, processesAt, type LaneRow, type LanesModel, type ProcessTrack } from "@/lib/charts/prepare-lanes";
import { latestViewport, panBy, tickStep, ticksWithStep, timeTicks, wheelFactor, zoomAround, type Viewport } from "@/lib/charts/timeline-viewport";
import { markPainted, prepareCanvas } from "@/components/charts/canvas";
import { AxisTopTicks } from "@/components/charts/axes";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { useChartTheme, type ChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { drawLane, drawLaneLabels, LANE_H, laneLabel } from "@/components/timeline/draw-lane";
import { cancelWork, scheduleWork } from "@/components/timeline/frame-budget";
import { subscribeFrames, TIME_MARGIN, useViewport, xToTime, type ViewportStore } from "@/components/timeline/viewport-store";

export interface TimeFormat {
  absTime: boolean;
  utc: boolean;
  T0: number;
}

export function formatTime(t: number, f: TimeFormat): string {
  return f.absTime ? formatClock(t, f.utc) : formatElapsed(t - f.T0);
}

const AXIS_H = 22;

export function TimeAxis({ store, width, fmt }: { store: ViewportStore; width: number; fmt: TimeFormat }) {
  const v = useViewport(store);
  const scale = scaleLinear<number>({ domain: [v.v0, v.v1], range: [TIME_MARGIN.left, Math.max(TIME_MARGIN.left + 1, width - TIME_MARGIN.right)] });
  const ticks = timeTicks(v, fmt.T0, Math.max(2, Math.min(10, Math.floor((width - 110) / 90))));
  return (
    <svg className="chart-axes time-axis" width={width} height={AXIS_H} aria-hidden="true">
      <AxisTopTicks bottom={AXIS_H - 2} scale={scale} ticks={ticks} format={(t) => formatTime(t, fmt)} />
    </svg>
  );
}

/** A number per lanes model, stamped on each lane canvas once it shows that model. */
const modelIds = new WeakMap<LanesModel, number>();
let nextModelId = 1;
function modelId(m: LanesModel): number {
  let id = modelIds.get(m);
  if (id === undefined) {
    id = nextModelId++;
    modelIds.set(m, id);
  }
  return id;
}

const maxTicksFor = (width: number) => Math.max(2, Math.min(10, Math.floor((width - 110) / 90)));
const TILE_DELAY_MS = 120;
const IDLE_REDRAW_MS = 250;

const LaneRowCanvas = memo(function LaneRowCanvas(props: {
  lane: LaneRow;
  model: LanesModel;
  store: ViewportStore;
  theme: ChartTheme;
  width: number;
  mem: boolean;
  T0: number;
  T1: number;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  const { lane, model, store, theme, width, mem, T0, T1 } = props;
  // Visibility outlives data changes (it decides which lanes follow a moving viewport).
  const seen = useRef({ visible: true, dirty: false, redraw: () => {} });
  // External system: the page's scroll position (is this lane on screen?).
  useEffect(() => {
    const c = ref.current;
    if (!c) return;
    const io = new IntersectionObserver(
      (entries) => {
        const s = seen.current;
        s.visible = entries[0]?.isIntersecting ?? true;
        if (s.visible && s.dirty) s.redraw();
      },
      { rootMargin: "200px 0px" },
    );
    io.observe(c);
    return () => io.disconnect();
  }, []);
  // External systems: the canvas bitmap and the viewport store.
  //
  // Pan keeps the time scale, so after a settle the lane is also rendered once into an
  // off-screen strip three viewports wide; pan frames then only copy the visible part of
  // that strip (a blit instead of re-stroking thousands of vertices). Zoom changes the
  // scale: those frames draw directly and the strip is rebuilt when the wheel rests.
  useEffect(() => {
    const c = ref.current;
    if (!c || width === 0) return;
    const seenState = seen.current;
    const left = TIME_MARGIN.left;
    const plotW = Math.max(1, width - left - TIME_MARGIN.right);
    const showNode = model.multiNode;
    const stamp = modelId(model);
    let tile: { canvas: HTMLCanvasElement; v0: number; v1: number; k: number; dpr: number } | null = null;
    let tileTimer: ReturnType<typeof setTimeout> | null = null;
    // Off-screen lanes skip frames while the view moves and catch up once it rests, so a
    // lane is never left showing an old window (even before it scrolls into view).
    let idleTimer: ReturnType<typeof setTimeout> | null = null;
    const tileJob = {};
    const idleJob = {};
    const buildTile = () => {
      tileTimer = null;
      if (!seenState.visible) return;
      const v = store.get();
      const s = v.v1 - v.v0;
      const k = plotW / s;
      const tv = { v0: Math.max(T0, v.v0 - s), v1: Math.min(T1, v.v1 + s) };
      const tileW = Math.ceil((tv.v1 - tv.v0) * k);
      const dpr = Math.min(window.devicePixelRatio || 1, 3);
      if ((left + tileW + TIME_MARGIN.right) * dpr > 16000) return;
      const off = tile?.canvas ?? document.createElement("canvas");
      const ctx = prepareCanvas(off, left + tileW + TIME_MARGIN.right, LANE_H);
      if (!ctx) return;
      drawLane(ctx, left + tileW + TIME_MARGIN.right, lane, model, tv, theme, { mem, ticks: ticksWithStep(tv, T0, tickStep(s, maxTicksFor(width))), showNode, labels: false });
      tile = { canvas: off, v0: tv.v0, v1: tv.v1, k, dpr };
    };
    const draw = (force = false) => {
      if (!seenState.visible && !force) {
        seenState.dirty = true;
        if (idleTimer) clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          idleTimer = null;
          scheduleWork(idleJob, () => {
            if (seenState.dirty) draw(true);
          });
        }, IDLE_REDRAW_MS);
        return;
      }
      seenState.dirty = false;
      const ctx = prepareCanvas(c, width, LANE_H);
      if (!ctx) return;
      const v = store.get();
      const k = plotW / (v.v1 - v.v0);
      if (tile && Math.abs(tile.k - k) <= k * 1e-9 && v.v0 >= tile.v0 - 1e-9 && v.v1 <= tile.v1 + 1e-9) {
        const d = tile.dpr;
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(tile.canvas, Math.round((left + (v.v0 - tile.v0) * k) * d), 0, Math.round(plotW * d), LANE_H * d, left, 0, plotW, LANE_H);
        drawLaneLabels(ctx, lane, theme, showNode);
        markPainted(c, stamp);
        return;
      }
      drawLane(ctx, width, lane, model, v, theme, { mem, ticks: timeTicks(v, T0, maxTicksFor(width)), showNode });
      markPainted(c, stamp);
      if (!seenState.visible) return;
      if (tileTimer) clearTimeout(tileTimer);
      tileTimer = setTimeout(() => scheduleWork(tileJob, buildTile), TILE_DELAY_MS);
    };
    seenState.redraw = () => draw();
    // New data, size or theme: every lane paints now, in sight or not, so the view is
    // complete in one go (data-painted); only viewport frames skip off-screen lanes.
    draw(true);
    const unsub = subscribeFrames(store, () => draw());
    return () => {
      unsub();
      seenState.redraw = () => {};
      if (tileTimer) clearTimeout(tileTimer);
      if (idleTimer) clearTimeout(idleTimer);
      cancelWork(tileJob);
      cancelWork(idleJob);
    };
  }, [lane, model, store, theme, width, mem, T0, T1]);
  return <canvas ref={ref} className="lane-canvas" style={{ width, height: LANE_H }} data-lane={lane.index} aria-hidden="true" />;
});

type RowLane = { index: number; node: string; gpu: number };

/**
 * Rows outside the drawn page: the lane's name where its canvas would write it, so a fast
 * scroll shows which lanes pass while their page's data loads.
 */
const RowLabels = memo(function RowLabels({ lanes, from, to, showNode }: { lanes: readonly RowLane[]; from: number; to: number; showNode: boolean }) {
  return (
    <div className="lanes-pending" aria-hidden="true">
      {lanes.slice(from, to).map((l) => {
        const label = laneLabel(l);
        return (
          <div key={l.index} className="lane-pending" data-pending-lane={l.index}>
            <b>{label.name}</b>
            {showNode ? <span>{label.node}</span> : null}
          </div>
        );
      })}
    </div>
  );
});

export function LaneCanvas(props: {
  model: LanesModel;
  processes: ReadonlyMap<string, ProcessTrack>;
  store: ViewportStore;
  T0: number;
  T1: number;
  maxWindow: number;
  mem: boolean;
  fmt: TimeFormat;
  overlayLabel: string | null;
  /** the selected lanes in row order; the box has a row for each */
  rowLanes: readonly RowLane[];
  /** row of model.lanes[0] among them */
  offset: number;
  /** told the rows in sight whenever the page scrolls or resizes */
  onRows: (rows: RowsInView) => void;
  loading: boolean;
}) {
  const { model, store, T0, T1, maxWindow, offset, rowLanes } = props;
  const total = rowLanes.length;
  const boxRef = useRef<HTMLDivElement>(null);
  const rowsRef = useRef<HTMLDivElement>(null);
  const width = useElementWidth(boxRef, 1000);
  const theme = useChartTheme();
  const [hover, setHover] = useState<{ lane: number; t: number; clientX: number; clientY: number; px: number } | null>(null);
  const [wheelHint, setWheelHint] = useState(false);
  const drag = useRef<{ x: number; v: Viewport; moved: boolean } | null>(null);
  // Wheel zoom reads this render's range and width (an effect event, not a ref).
  const zoomAt = useEffectEvent((clientX: number, left: number, deltaY: number) => {
    const v = store.get();
    const pivot = xToTime(clientX - left, v, width);
    store.set(zoomAround(v, Math.min(v.v1, Math.max(v.v0, pivot)), wheelFactor(deltaY), T0, T1, maxWindow));
  });

  // External system: the wheel (a non-passive listener is the only way to keep the page
  // from scrolling while zooming). Plain wheel scrolls the page unless the lanes have focus.
  useEffect(() => {
    const el = rowsRef.current;
    if (!el) return;
    let hintTimer: ReturnType<typeof setTimeout> | null = null;
    const onWheel = (e: WheelEvent) => {
      const engaged = e.ctrlKey || e.metaKey || document.activeElement === el;
      if (!engaged) {
        setWheelHint(true);
        if (hintTimer) clearTimeout(hintTimer);
        hintTimer = setTimeout(() => setWheelHint(false), 1500);
        return;
      }
      e.preventDefault();
      zoomAt(e.clientX, el.getBoundingClientRect().left, e.deltaY);
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => {
      el.removeEventListener("wheel", onWheel);
      if (hintTimer) clearTimeout(hintTimer);
    };
  }, [store]);

  // External system: the page's scroll position and the window's height decide which
  // rows are in sight (reported at most once per frame).
  const reportRows = useEffectEvent(() => {
    const el = rowsRef.current;
    if (!el) return;
    const r = el.getBoundingClientRect();
    const top = Math.max(0, -r.top);
    const seen = Math.max(0, Math.min(window.innerHeight, r.bottom) - Math.max(0, r.top));
    props.onRows({ first: Math.min(Math.max(0, total - 1), Math.floor(top / LANE_H)), count: Math.ceil(seen / LANE_H) + 1 });
  });
  useEffect(() => {
    let frame = 0;
    const onScroll = () => {
      if (frame === 0) frame = requestAnimationFrame(() => {
        frame = 0;
        reportRows();
      });
    };
    reportRows();
    window.addEventListener("scroll", onScroll, { passive: true });
    window.addEventListener("resize", onScroll, { passive: true });
    return () => {
      window.removeEventListener("scroll", onScroll);
      window.removeEventListener("resize", onScroll);
      if (frame !== 0) cancelAnimationFrame(frame);
    };
  }, [total]);

  const local = (e: { clientX: number; clientY: number }) => {
    const r = rowsRef.current!.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top] as const;
  };

  const onPointerDown = (e: ReactPointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    e.currentTarget.setPointerCapture(e.pointerId);
    drag.current = { x: e.clientX, v: store.get(), moved: false };
    setHover(null);
  };
  const onPointerMove = (e: ReactPointerEvent<HTMLDivElement>) => {
    const d = drag.current;
    if (d) {
      const dx = e.clientX - d.x;
      if (Math.abs(dx) > 2) d.moved = true;
      const plotW = Math.max(1, width - TIME_MARGIN.left - TIME_MARGIN.right);
      store.set(panBy(d.v, (-dx / plotW) * (d.v.v1 - d.v.v0), T0, T1));
      return;
    }
    const [px, py] = local(e);
    if (px < TIME_MARGIN.left || px > width - TIME_MARGIN.right) {
      setHover(null);
      return;
    }
    const lane = Math.floor(py / LANE_H) - offset;
    if (lane < 0 || lane >= model.lanes.length) {
      setHover(null);
      return;
    }
    setHover({ lane, t: xToTime(px, store.get(), width), clientX: e.clientX, clientY: e.clientY, px });
  };
  const onPointerUp = () => {
    drag.current = null;
  };

  let tip: TooltipState | null = null;
  if (hover) {
    const lane = model.lanes[hover.lane];
    if (lane) {
      const t = hover.t;
      const phases = phasesAt(lane.phases, t).map((i) => {
        const rank = lane.phases.rank[i]!;
        return `${model.phaseNames[lane.phases.name[i]!] ?? "?"}${rank >= 0 ? ` (rank ${rank})` : ""}`;
      });
      const s = lane.gpuTrack ? gpuSampleAt(lane.gpuTrack, t) : null;
      const procs = processesAt(props.processes.get(lane.key), t);
      const ov = overlayAt(lane, model, t);
      tip = {
        clientX: hover.clientX,
        clientY: hover.clientY,
        content: (
          <>
            <div className="tip-title">
              g{lane.index} {lane.node}:{lane.gpu} · {formatTime(t, props.fmt)}
            </div>
            <div>phase: {phases.length > 0 ? phases.join(" › ") : "—"}</div>
            <div>
              util: {s ? `${Math.round(s.util)}%` : "—"} · mem: {s && Number.isFinite(s.mem) ? `${(s.mem / 1024).toFixed(3)}G` : "—"}
            </div>
            {procs.length > 0 ? (
              <>
                <div>top processes:</div>
                {procs.map((p) => (
                  <div key={p.pid} className="tip-indent">
                    {p.name} (pid {p.pid}): {(p.mem_mb / 1024).toFixed(3)}G
                  </div>
                ))}
              </>
            ) : null}
            {ov && props.overlayLabel ? (
              <>
                <div>
                  {props.overlayLabel}: {formatValue(ov.value)}
                </div>
                <div className="muted">engine: {ov.addr}</div>
              </>
            ) : null}
          </>
        ),
      };
    }
  }

  return (
    <div ref={boxRef} className="lanes-box">
      <div className="lanes-axis">
        <TimeAxis store={store} width={width} fmt={props.fmt} />
      </div>
      <div
        ref={rowsRef}
        className={total > model.lanes.length ? "lanes-rows paged" : "lanes-rows"}
        tabIndex={0}
        role="group"
        aria-label={`${total > model.lanes.length ? `GPU lanes ${offset + 1}–${offset + model.lanes.length} of ${total}` : `${model.lanes.length} GPU lanes`}; drag to pan, Ctrl+wheel or +/− to zoom`}
        data-testid="lane-canvas"
        data-lanes-shown={model.lanes.length}
        data-lanes-offset={offset}
        data-lanes-total={total}
        data-lanes-with-data={model.lanes.reduce((n, l) => n + (l.gpuTrack || l.phases.t0.length > 0 ? 1 : 0), 0)}
        data-lanes-with-util={model.lanes.reduce((n, l) => n + (l.gpuTrack ? 1 : 0), 0)}
        data-loading={props.loading ? "true" : "false"}
        data-model={modelId(model)}
        style={{ height: Math.max(1, total, offset + model.lanes.length) * LANE_H }}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={onPointerUp}
        onPointerLeave={() => setHover(null)}
        onDoubleClick={() => store.set(latestViewport(T0, T1, maxWindow))}
      >
        {offset > 0 ? <RowLabels lanes={rowLanes} from={0} to={offset} showNode={model.multiNode} /> : null}
        {model.lanes.map((lane) => (
          <LaneRowCanvas key={lane.key} lane={lane} model={model} store={store} theme={theme} width={width} mem={props.mem} T0={T0} T1={T1} />
        ))}
        {offset + model.lanes.length < total ? <RowLabels lanes={rowLanes} from={offset + model.lanes.length} to={total} showNode={model.multiNode} /> : null}
        {model.lanes.length === 0 ? <div className="chart-empty">{props.loading ? "loading lanes…" : "no lanes selected"}</div> : null}
        {hover ? <div className="lanes-cursor" style={{ left: hover.px }} /> : null}
        {wheelHint ? <div className="wheel-hint">Ctrl + wheel to zoom (or click the lanes first)</div> : null}
      </div>
      <ChartTooltip tip={tip} />
    </div>
  );
}

