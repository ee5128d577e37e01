"use client";

/**
 * Carpet (rank heatmap, ≤ 64 lanes): one row per GPU (or per trajectory for `traj`),
 * util / mem / power / phase / lifecycle over the viewport. The matrix image is placed by
 * its own [t0, t1], so during a pan it slides at once and the refetch fills in after.
 * Click a row = add/remove that GPU; drag over rows = brush several.
 */
import { useEffect, useMemo, useRef, useState, type PointerEvent as ReactPointerEvent } from "react";
import { magnitudeRamp } from "@/lib/charts/palette";
import {
  bucketAt,
  CARPET_METRICS,
  carpetScaleText,
  carpetHeight,
  cellText,
  prepareCarpet,
  rowIdentity,
  rowLabel,
  rowLaneIndex,
  type CarpetMetric,
  type CarpetModel,
} from "@/lib/charts/prepare-carpet";
import type { HeatmapData } from "@/lib/client/telemetry-queries";
import { markPainted, prepareCanvas } from "@/components/charts/canvas";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { formatTime, type TimeFormat } from "@/components/timeline/LaneCanvas";
import { subscribeFrames, TIME_MARGIN, timeToX, xToTime, type ViewportStore } from "@/components/timeline/viewport-store";

export function Carpet(props: {
  data: HeatmapData | undefined;
  metric: CarpetMetric;
  onMetric: (m: CarpetMetric) => void;
  store: ViewportStore;
  selected: ReadonlySet<number> | null;
  onBrush: (indices: number[]) => void;
  /** rows the answer will have, when known (lane metrics: one per GPU); null for lifecycle */
  rowsHint: number | null;
  fmt: TimeFormat;
  error: string | null;
  loading: boolean;
}) {
  const theme = useChartTheme();
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(boxRef, 1000);
  const model: CarpetModel | null = useMemo(
    () => (props.data && props.data.header.rows.length > 0 ? prepareCarpet(props.data.header, props.data.matrix, theme.name) : null),
    [props.data, theme.name],
  );
  const image = useMemo(() => {
    if (!model || typeof document === "undefined" || model.xBuckets === 0) return null;
    const c = document.createElement("canvas");
    c.width = model.xBuckets;
    c.height = model.rows;
    const ctx = c.getContext("2d");
    if (!ctx) return null;
    ctx.putImageData(new ImageData(model.rgba as Uint8ClampedArray<ArrayBuffer>, model.xBuckets, model.rows), 0, 0);
    return c;
  }, [model]);
  // The brush lives in a ref for the handlers (a release right after the press must see it)
  // and in state for drawing the shaded rows.
  const [brush, setBrushState] = useState<{ a: number; b: number } | null>(null);
  const brushRef = useRef<{ a: number; b: number } | null>(null);
  const setBrush = (b: { a: number; b: number } | null) => {
    brushRef.current = b;
    setBrushState(b);
  };
  const [hover, setHover] = useState<{ row: number; t: number; clientX: number; clientY: number } | null>(null);
  // Before its answer, the carpet takes the height its rows will need (one per GPU, known
  // from the topology): the 64-row carpet grew from 24 to 366 px when it landed and pushed
  // the lanes out of the screen.
  const height = model ? model.height : props.rowsHint ? carpetHeight(props.rowsHint) : 24;
  const { store, selected } = props;

  // External systems: the canvas bitmap and the viewport store.
  useEffect(() => {
    const c = canvasRef.current;
    if (!c || width === 0) return;
    const draw = () => {
      const ctx = prepareCanvas(c, width, height);
      if (!ctx) return;
      ctx.font = theme.font;
      if (!model || !image) {
        ctx.fillStyle = theme.muted;
        ctx.textBaseline = "middle";
        ctx.fillText("waiting for timeline data…", TIME_MARGIN.left + 8, 12);
        markPainted(c, "empty");
        return;
      }
      const v = store.get();
      const rh = model.rowHeight;
      const xa = timeToX(model.header.t0, v, width);
      const xb = timeToX(model.header.t1, v, width);
      ctx.save();
      ctx.beginPath();
      ctx.rect(TIME_MARGIN.left, 0, width - TIME_MARGIN.left - TIME_MARGIN.right, height);
      ctx.clip();
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(image, xa, 0, xb - xa, model.rows * rh);
      ctx.restore();
      // separators
      ctx.strokeStyle = theme.muted;
      ctx.lineWidth = 1;
      for (const s of model.separators) {
        ctx.setLineDash(s.kind === "node" ? [] : [3, 3]);
        ctx.beginPath();
        ctx.moveTo(TIME_MARGIN.left, s.row * rh + 0.5);
        ctx.lineTo(width - TIME_MARGIN.right, s.row * rh + 0.5);
        ctx.stroke();
      }
      ctx.setLineDash([]);
      // labels and selection markers
      ctx.fillStyle = theme.text;
      ctx.textBaseline = "middle";
      const fontPx = Math.min(11, Math.max(8, rh + 2));
      ctx.font = `${fontPx}px ${theme.font.replace(/^\d+px /, "")}`;
      // a label is centred on its row but kept whole inside the canvas: with thin rows the
      // first one was centred 2 px from the top edge and lost its upper half (#15 defect 11)
      const half = fontPx / 2 + 1;
      const labelY = (i: number) => Math.min(Math.max(i * rh + rh / 2, half), height - half);
      c.dataset.labelTop = String(Math.round((labelY(0) - fontPx / 2) * 10) / 10);
      model.header.rows.forEach((r, i) => {
        if (i % model.labelEvery === 0) ctx.fillText(rowLabel(r), 8, labelY(i));
        const li = rowLaneIndex(r);
        if (li !== null && selected?.has(li)) {
          ctx.fillStyle = theme.accent;
          ctx.fillRect(TIME_MARGIN.left - 9, i * rh, 3, rh);
          ctx.fillStyle = theme.text;
        }
      });
      markPainted(c, "data");
    };
    draw();
    return subscribeFrames(store, draw);
  }, [model, image, width, height, theme, store, selected]);

  const rowAt = (e: { clientY: number }) => {
    if (!model) return -1;
    const r = boxRef.current!.querySelector("canvas")!.getBoundingClientRect();
    const row = Math.floor((e.clientY - r.top) / model.rowHeight);
    return row >= 0 && row < model.rows ? row : -1;
  };

  const brushable = model?.kind !== "lifecycle";
  const onDown = (e: ReactPointerEvent<HTMLDivElement>) => {
    if (e.button !== 0 || !brushable) return;
    const row = rowAt(e);
    if (row < 0) return;
    e.currentTarget.setPointerCapture(e.pointerId);
    setBrush({ a: row, b: row });
    setHover(null);
  };
  const onMove = (e: ReactPointerEvent<HTMLDivElement>) => {
    const row = rowAt(e);
    const br = brushRef.current;
    if (br) {
      if (row >= 0 && row !== br.b) setBrush({ a: br.a, b: row });
      return;
    }
    const r = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - r.left;
    if (row < 0 || x < TIME_MARGIN.left || x > width - TIME_MARGIN.right) {
      setHover(null);
      return;
    }
    setHover({ row, t: xToTime(x, store.get(), width), clientX: e.clientX, clientY: e.clientY });
  };
  const onUp = () => {
    const br = brushRef.current;
    if (!br || !model) return;
    const lo = Math.min(br.a, br.b);
    const hi = Math.max(br.a, br.b);
    setBrush(null);
    const idx: number[] = [];
    for (let i = lo; i <= hi; i++) {
      const li = rowLaneIndex(model.header.rows[i]);
      if (li !== null) idx.push(li);
    }
    props.onBrush(idx);
  };

  let tip: TooltipState | null = null;
  if (hover && model) {
    const b = bucketAt(model, hover.t);
    tip = {
      clientX: hover.clientX,
      clientY: hover.clientY,
      content: (
        <>
          <div className="tip-title">
            {rowIdentity(model.header.rows[hover.row]!)} · {formatTime(hover.t, props.fmt)}
          </div>
          <div>{b >= 0 ? cellText(model, hover.row, b) : "outside the loaded window"}</div>
          {brushable ? <div className="tip-hint">click: add/remove this GPU · drag: brush rows</div> : null}
        </>
      ),
    };
  }

  const ramp = magnitudeRamp(theme.name);
  const scale = model ? carpetScaleText(model) : "";
  return (
    <section className="panel tl-panel" aria-label="Carpet" data-testid="carpet" data-rows={model?.rows ?? 0} data-metric={props.metric} data-selected={selected ? [...selected].sort((a, b) => a - b).join(",") : "all"}>
      <div className="control-row">
        <span className="muted">Carpet</span>
        {CARPET_METRICS.map((m) => (
          <button key={m.id} type="button" className="chip-btn" aria-pressed={props.metric === m.id} onClick={() => props.onMetric(m.id)}>
            {m.label}
          </button>
        ))}
        {model?.kind === "magnitude" ? (
          <span className="ramp" title="colour scale; empty = no sample (a 0 reading also maps here)">
            <span className="ramp-bar" style={{ background: `linear-gradient(90deg, rgb(${ramp.lo.join(",")}), rgb(${ramp.hi.join(",")}))` }} />
            <span className="muted mono">{scale}</span>
          </span>
        ) : scale ? (
          <span className="muted mono">{scale}</span>
        ) : null}
        <span className="hint muted">{brushable ? "Click gpu = add/remove · drag = brush" : "one row per trajectory (earliest first)"}</span>
        {props.loading ? <span className="muted small">loading…</span> : null}
      </div>
      {props.error ? (
        <p className="error-text" role="alert">
          {props.error}
        </p>
      ) : null}
      <div
        ref={boxRef}
        className="carpet-box"
        style={{ height, cursor: brushable ? "pointer" : "crosshair" }}
        onPointerDown={onDown}
        onPointerMove={onMove}
        onPointerUp={onUp}
        onPointerCancel={() => setBrush(null)}
        onPointerLeave={() => setHover(null)}
      >
        <canvas ref={canvasRef} style={{ width, height }} aria-hidden="true" />
        {brush && model ? (
          <div
            className="carpet-brush"
            style={{ top: Math.min(brush.a, brush.b) * model.rowHeight, height: (Math.abs(brush.b - brush.a) + 1) * model.rowHeight, left: TIME_MARGIN.left, right: TIME_MARGIN.right }}
          />
        ) : null}
      </div>
      <ChartTooltip tip={tip} />
    </section>
  );
}
