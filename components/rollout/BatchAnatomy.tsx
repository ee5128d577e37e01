"use client";
/**
 * Batch anatomy swimlanes (docs/views.md 5) on a canvas: one row per sample with its
 * queue/attempt underlay, generate segments coloured by weight version and tool waits,
 * plus the step's consume marker. Also used with a single lane on the Sample view.
 *
 * ctrl/⌘ + wheel = zoom at the cursor (a plain wheel scrolls the page), drag = pan,
 * double-click = reset, click = open that sample (multi-lane only); +/−/←/→/0 with focus.
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent as ReactMouseEvent } from "react";
import {
  ANATOMY_SORTS,
  anatomyDensity,
  anatomyTooltip,
  CONSUME_COLOR,
  isFullView,
  panView,
  timeTicks,
  TOOL_COLOR,
  versionColor,
  zoomView,
  type AnatomyModel,
  type AnatomySort,
  type View,
} from "@/lib/rollout-view/anatomy";
import { formatElapsed } from "@/lib/charts/core/format";
import { markPainted, prepareCanvas } from "@/components/charts/canvas";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";

export interface BatchAnatomyProps {
  model: AnatomyModel;
  /** Single-lane mode (Sample view): no sort chips, no click-to-open. */
  single?: boolean;
  sort?: AnatomySort;
  onSort?: (s: AnatomySort) => void;
  onOpen?: (sampleIndex: number) => void;
}

export function BatchAnatomy({ model, single = false, sort = "submit", onSort, onOpen }: BatchAnatomyProps) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(wrapRef);
  const theme = useChartTheme();
  const dens = useMemo(() => anatomyDensity(model.rows.length), [model.rows.length]);
  const [viewState, setView] = useState<{ span: number; view: View }>({ span: model.span, view: [0, model.span] });
  // A new model (another step) starts unzoomed.
  const view = useMemo<View>(() => (viewState.span === model.span ? viewState.view : [0, model.span]), [viewState, model.span]);
  const [hover, setHover] = useState<{ row: number; tip: TooltipState } | null>(null);
  const [panning, setPanning] = useState(false);
  const plotW = Math.max(20, width - dens.left - dens.right);

  const setViewFor = (v: View) => setView({ span: model.span, view: v });

  // Canvas drawing: syncs the bitmap with (model, view, size, hover, theme).
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const ctx = prepareCanvas(canvas, width, dens.height);
    if (!ctx) return;
    const c = theme;
    const queue = c.dark ? "#3b362e" : "#efe8dc";
    const X = (t: number) => dens.left + ((t - view[0]) / (view[1] - view[0])) * plotW;
    ctx.font = `10.5px ${c.mono}`;
    ctx.textBaseline = "middle";
    // time ticks and faint grid
    const { ticks } = timeTicks(view);
    ctx.fillStyle = c.muted;
    ctx.strokeStyle = c.border;
    ctx.lineWidth = 1;
    ctx.textAlign = "center";
    for (const t of ticks) {
      const x = Math.round(X(t)) + 0.5;
      ctx.fillText(formatElapsed(t), x, 9);
      ctx.beginPath();
      ctx.moveTo(x, dens.top - 2);
      ctx.lineTo(x, dens.height - 4);
      ctx.stroke();
    }
    ctx.textAlign = "start";
    if (hover) {
      ctx.fillStyle = "rgba(213,88,22,0.09)";
      ctx.fillRect(0, dens.top + hover.row * dens.rowH, width, dens.rowH);
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(dens.left, 0, plotW, dens.height);
    ctx.clip();
    model.rows.forEach((row, i) => {
      const y = dens.top + i * dens.rowH;
      for (const a of row.attempts) {
        const x0 = X(a.a);
        const x1 = X(a.b);
        if (x1 < dens.left || x0 > dens.left + plotW) continue;
        ctx.fillStyle = queue;
        ctx.fillRect(x0, y + dens.attemptInset, Math.max(1.5, x1 - x0), dens.rowH - 2 * dens.attemptInset);
      }
      for (const s of row.segments) {
        const x0 = X(s.a);
        const x1 = X(s.b);
        if (x1 < dens.left || x0 > dens.left + plotW) continue;
        ctx.fillStyle = s.color;
        ctx.fillRect(x0, y + dens.segInset, Math.max(1.5, x1 - x0), dens.rowH - 2 * dens.segInset);
      }
    });
    if (model.consume !== null) {
      const x = X(model.consume);
      ctx.strokeStyle = CONSUME_COLOR;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, dens.top - 4);
      ctx.lineTo(x, dens.height - 2);
      ctx.stroke();
    }
    ctx.restore();
    ctx.fillStyle = c.text;
    model.rows.forEach((row, i) => {
      const y = dens.top + i * dens.rowH + dens.rowH / 2;
      if (i % dens.labelEvery === 0) ctx.fillText(row.label, 8, dens.labelEvery > 1 ? dens.top + i * dens.rowH + 4 : y);
      if (dens.detailed && row.info) {
        ctx.fillStyle = c.muted;
        ctx.fillText(row.info, dens.left + plotW + 6, y);
        ctx.fillStyle = c.text;
      }
    });
    markPainted(canvas, model.rows.length > 0 ? "data" : "empty");
  }, [model, view, width, dens, plotW, hover, theme]);

  // ctrl/⌘ + wheel zooms; a native listener because React's wheel handler is passive.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const onWheel = (e: WheelEvent) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      e.preventDefault();
      const r = canvas.getBoundingClientRect();
      const x = e.clientX - r.left;
      setView((prev) => {
        const v = prev.span === model.span ? prev.view : ([0, model.span] as View);
        const at = v[0] + ((x - dens.left) / plotW) * (v[1] - v[0]);
        return { span: model.span, view: zoomView(v, at, e.deltaY, model.span) };
      });
    };
    canvas.addEventListener("wheel", onWheel, { passive: false });
    return () => canvas.removeEventListener("wheel", onWheel);
  }, [model.span, dens.left, plotW]);

  const hit = (e: { clientX: number; clientY: number }) => {
    const r = canvasRef.current!.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    const row = Math.floor((y - dens.top) / dens.rowH);
    const t = view[0] + ((x - dens.left) / plotW) * (view[1] - view[0]);
    return { row: row >= 0 && row < model.rows.length ? row : -1, t, inPlot: x >= dens.left && x <= dens.left + plotW };
  };

  const onMove = (e: ReactMouseEvent) => {
    if (panning) return;
    const h = hit(e);
    const row = model.rows[h.row];
    setHover(row ? { row: h.row, tip: { clientX: e.clientX, clientY: e.clientY, content: anatomyTooltip(row, h.t) + (single || !onOpen ? "" : "\nclick to open") } } : null);
  };

  const onDown = (e: ReactMouseEvent) => {
    if (e.button !== 0) return;
    e.preventDefault();
    const startX = e.clientX;
    const startView = view;
    const start = hit(e);
    let moved = false;
    const move = (ev: MouseEvent) => {
      const dx = ev.clientX - startX;
      if (!moved && Math.abs(dx) < 4) return;
      moved = true;
      setPanning(true);
      setHover(null);
      setViewFor(panView(startView, (-dx / plotW) * (startView[1] - startView[0]), model.span));
    };
    const up = () => {
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
      setPanning(false);
      const row = model.rows[start.row];
      if (!moved && !single && row && onOpen) onOpen(row.sampleIndex);
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  };

  const zoomBy = (dy: number) => setViewFor(zoomView(view, (view[0] + view[1]) / 2, dy, model.span));
  const onKey = (e: KeyboardEvent) => {
    const w = view[1] - view[0];
    if (e.key === "+" || e.key === "=") zoomBy(-350);
    else if (e.key === "-") zoomBy(350);
    else if (e.key === "ArrowLeft") setViewFor(panView(view, -w * 0.2, model.span));
    else if (e.key === "ArrowRight") setViewFor(panView(view, w * 0.2, model.span));
    else if (e.key === "0") setViewFor([0, model.span]);
    else return;
    e.preventDefault();
  };

  const full = isFullView(view, model.span);
  const shownVersions = model.versions.slice(0, 10);
  return (
    <div className="anat">
      {!single ? (
        <div className="rv-controls anat-controls">
          <span className="muted">
            {model.rows.length} trajectories · ctrl+wheel = zoom · drag = pan · sort
          </span>
          <div className="rv-chips" role="group" aria-label="Sort trajectories">
            {ANATOMY_SORTS.map((s) => (
              <button key={s.key} type="button" className="rv-btn" aria-pressed={sort === s.key} title={s.hint} onClick={() => onSort?.(s.key)}>
                {s.label}
              </button>
            ))}
          </div>
        </div>
      ) : null}
      <div ref={wrapRef} className="anat-scroll" style={{ maxHeight: Math.min(dens.height, 640) }}>
        <canvas
          ref={canvasRef}
          className={`anat-canvas${panning ? " anat-panning" : ""}`}
          tabIndex={0}
          role="img"
          aria-label={single ? `Lifecycle of sample ${model.rows[0]?.label ?? ""}` : `Batch anatomy of ${model.rows.length} samples`}
          data-testid="anatomy-canvas"
          data-rows={model.rows.length}
          data-label-gap={dens.labelEvery * dens.rowH}
          onMouseMove={onMove}
          onMouseLeave={() => setHover(null)}
          onMouseDown={onDown}
          onDoubleClick={() => setViewFor([0, model.span])}
          onKeyDown={onKey}
        />
      </div>
      <div className="anat-legend">
        <span className="anat-key">
          generating, by weight version:
          {shownVersions.map((v) => (
            <span key={v} className="anat-ver">
              <i style={{ background: versionColor(v) }} />v{v}
            </span>
          ))}
          {model.versions.length > shownVersions.length ? "…" : null}
        </span>
        <span className="anat-key">
          <i style={{ background: TOOL_COLOR }} /> tool wait
        </span>
        <span className="anat-key">
          <i className="anat-queue" /> queue / attempt
        </span>
        {model.consume !== null ? (
          <span className="anat-key" style={{ color: CONSUME_COLOR }}>
            │ consume
          </span>
        ) : null}
        <span className="anat-zoom">
          <button type="button" className="rv-btn" onClick={() => zoomBy(-350)} aria-label="Zoom in">
            +
          </button>
          <button type="button" className="rv-btn" onClick={() => zoomBy(350)} aria-label="Zoom out">
            −
          </button>
          {!full ? (
            <button type="button" className="rv-btn" onClick={() => setViewFor([0, model.span])}>
              reset
            </button>
          ) : null}
        </span>
      </div>
      <ChartTooltip tip={hover?.tip ?? null} />
    </div>
  );
}
