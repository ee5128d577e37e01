"use client";

/**
 * Fleet overview (> 64 lanes): scale-invariant summary of every lane — phase composition
 * (stacked fractions) over the util band (p10–p90, median, min). Live in follow mode
 * (the original only refreshed the hidden carpet).
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type { FleetResponse } from "@/lib/charts/api-shapes";
import { laneColors, phaseColor } from "@/lib/charts/palette";
import { compositionAt, prepareFleet } from "@/lib/charts/prepare-fleet";
import { prepareCanvas } from "@/components/charts/canvas";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { formatTime, type TimeFormat } from "@/components/timeline/LaneCanvas";
import { subscribeFrames, TIME_MARGIN, timeToX, xToTime, type ViewportStore } from "@/components/timeline/viewport-store";

const PANE = 96;
const GAP = 8;

export function FleetOverview(props: { data: FleetResponse | undefined; store: ViewportStore; fmt: TimeFormat; error: string | null; totalLanes: number }) {
  const theme = useChartTheme();
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(boxRef, 1000);
  const model = useMemo(() => (props.data ? prepareFleet(props.data) : null), [props.data]);
  const [hover, setHover] = useState<{ b: number; pane: 0 | 1; clientX: number; clientY: number; t: number } | null>(null);
  const height = PANE * 2 + GAP;
  const { store } = props;

  // External systems: the canvas bitmap and the viewport store.
  useEffect(() => {
    const c = canvasRef.current;
    if (!c || width === 0) return;
    const draw = () => {
      const ctx = prepareCanvas(c, width, height);
      if (!ctx) return;
      ctx.font = theme.font;
      ctx.textBaseline = "middle";
      ctx.fillStyle = theme.muted;
      ctx.fillText("phase %", 8, PANE / 2);
      ctx.fillText("util %", 8, PANE + GAP + PANE / 2);
      // what the canvas shows, for the e2e suite and the bench (as the other canvases say it)
      c.dataset.painted = model ? "data" : "empty";
      if (!model) return;
      const v = store.get();
      const X = model.xBuckets;
      const bx = (b: number) => timeToX(model.t0 + ((model.t1 - model.t0) * b) / X, v, width);
      ctx.save();
      ctx.beginPath();
      ctx.rect(TIME_MARGIN.left, 0, width - TIME_MARGIN.left - TIME_MARGIN.right, height);
      ctx.clip();
      // composition: stacked from the bottom in palette order
      if (model.hasPhases) {
        for (let b = 0; b < X; b++) {
          const x0 = bx(b);
          const w = Math.max(1, bx(b + 1) - x0);
          let prev = 0;
          model.phases.forEach((p, k) => {
            const top = model.stack[k]![b]!;
            if (top > prev) {
              ctx.fillStyle = phaseColor(p, theme.name);
              ctx.fillRect(x0, PANE - top * PANE, w + 0.5, (top - prev) * PANE);
            }
            prev = top;
          });
        }
      } else {
        ctx.fillStyle = theme.muted;
        ctx.fillText("waiting for phase data…", TIME_MARGIN.left + 8, PANE / 2);
      }
      // band
      const y0 = PANE + GAP;
      const sy = (u: number) => y0 + PANE - (u / 100) * PANE;
      const colors = laneColors(theme.name);
      ctx.fillStyle = colors.bandFill;
      for (let b = 0; b < X; b++) {
        const lo = model.p10[b]!;
        const hi = model.p90[b]!;
        if (Number.isNaN(lo) || Number.isNaN(hi)) continue;
        const x0 = bx(b);
        ctx.fillRect(x0, sy(hi), Math.max(1, bx(b + 1) - x0) + 0.5, Math.max(1, sy(lo) - sy(hi)));
      }
      const line = (ys: Float64Array, color: string, dash: number[], lw: number) => {
        ctx.strokeStyle = color;
        ctx.lineWidth = lw;
        ctx.setLineDash(dash);
        ctx.beginPath();
        let pen = false;
        for (let b = 0; b < X; b++) {
          const u = ys[b]!;
          if (Number.isNaN(u)) continue; // lines connect across empty buckets
          const x = bx(b + 0.5);
          if (pen) ctx.lineTo(x, sy(u));
          else ctx.moveTo(x, sy(u));
          pen = true;
        }
        ctx.stroke();
        ctx.setLineDash([]);
      };
      line(model.min, colors.min, [3, 3], 1.2);
      line(model.p50, colors.median, [], 1.5);
      ctx.restore();
      ctx.strokeStyle = theme.border;
      ctx.beginPath();
      for (const u of [0, 50, 100]) {
        ctx.moveTo(TIME_MARGIN.left, Math.round(sy(u)) + 0.5);
        ctx.lineTo(width - TIME_MARGIN.right, Math.round(sy(u)) + 0.5);
      }
      ctx.stroke();
      ctx.fillStyle = theme.muted;
      ctx.textAlign = "right";
      for (const u of [0, 50, 100]) ctx.fillText(String(u), TIME_MARGIN.left - 6, sy(u));
      ctx.textAlign = "left";
    };
    draw();
    return subscribeFrames(store, draw);
  }, [model, width, height, theme, store]);

  let tip: TooltipState | null = null;
  if (hover && model) {
    const b = hover.b;
    tip = {
      clientX: hover.clientX,
      clientY: hover.clientY,
      content:
        hover.pane === 0 ? (
          <>
            <div className="tip-title">{formatTime(hover.t, props.fmt)}</div>
            {compositionAt(model, b).map((c) => (
              <div key={c.phase}>
                {c.phase}: {(c.fraction * 100).toFixed(1)}%
              </div>
            ))}
          </>
        ) : (
          <>
            <div className="tip-title">{formatTime(hover.t, props.fmt)}</div>
            <div>median: {Number.isNaN(model.p50[b]!) ? "—" : `${model.p50[b]!.toFixed(0)}%`}</div>
            <div>
              p10–p90: {Number.isNaN(model.p10[b]!) ? "—" : `${model.p10[b]!.toFixed(0)}–${model.p90[b]!.toFixed(0)}%`}
            </div>
            <div>min: {Number.isNaN(model.min[b]!) ? "—" : `${model.min[b]!.toFixed(0)}%`}</div>
          </>
        ),
    };
  }

  return (
    <section className="panel tl-panel" aria-label="Fleet overview" data-testid="fleet">
      <div className="control-row">
        <span className="muted">fleet overview · {model?.lanes ?? props.totalLanes} lanes</span>
        <span className="hint muted right">top: phase composition · bottom: util p10–p90 band, median, min</span>
      </div>
      {props.error ? (
        <p className="error-text" role="alert">
          {props.error}
        </p>
      ) : null}
      <div
        ref={boxRef}
        className="carpet-box"
        style={{ height }}
        onPointerMove={(e) => {
          if (!model) return;
          const r = e.currentTarget.getBoundingClientRect();
          const x = e.clientX - r.left;
          const y = e.clientY - r.top;
          if (x < TIME_MARGIN.left || x > width - TIME_MARGIN.right) return setHover(null);
          const t = xToTime(x, store.get(), width);
          const b = Math.floor(((t - model.t0) / (model.t1 - model.t0)) * model.xBuckets);
          if (b < 0 || b >= model.xBuckets) return setHover(null);
          setHover({ b, pane: y < PANE + GAP / 2 ? 0 : 1, clientX: e.clientX, clientY: e.clientY, t });
        }}
        onPointerLeave={() => setHover(null)}
      >
        <canvas ref={canvasRef} style={{ width, height }} aria-hidden="true" />
      </div>
      <ChartTooltip tip={tip} />
    </section>
  );
}
