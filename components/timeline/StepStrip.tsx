"use client";

/**
 * Wait ratio / step, time-aligned with the lanes: each step is drawn over its own time
 * span, shaded by its wait ratio on an absolute scale. Click a step = zoom the lanes to it;
 * Shift/⌘-click (or the link) = open that step's Rollouts view. `[` / `]` walk the steps.
 * Only steps in view are drawn, so long runs stay one strip (not thousands of cells).
 */
import { Link } from "@/components/shell/Link";
import { useEffect, useMemo, useRef, useState, type PointerEvent as ReactPointerEvent } from "react";
import { formatDuration, formatPercent } from "@/lib/charts/core/format";
import { laneColors } from "@/lib/charts/palette";
import { stepAt, stepsInView, waitAlpha, type StepSpan } from "@/lib/charts/prepare-bubbles";
import { prepareCanvas } from "@/components/charts/canvas";
import { ChartTooltip, type TooltipState } from "@/components/charts/ChartTooltip";
import { useChartTheme } from "@/components/charts/use-chart-theme";
import { useElementWidth } from "@/components/charts/use-element-width";
import { subscribeFrames, TIME_MARGIN, timeToX, useViewport, xToTime, type ViewportStore } from "@/components/timeline/viewport-store";

const H = 24;

export function StepStrip(props: {
  steps: readonly StepSpan[];
  store: ViewportStore;
  current: number | null;
  onStep: (s: StepSpan) => void;
  stepHref: (step: number) => string | null;
  onOpen: (step: number) => void;
}) {
  const theme = useChartTheme();
  const boxRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const width = useElementWidth(boxRef, 1000);
  const { steps, store, current } = props;
  const v = useViewport(store);
  const inView = useMemo(() => stepsInView(steps, v.v0, v.v1), [steps, v.v0, v.v1]);
  const [hover, setHover] = useState<{ s: StepSpan; clientX: number; clientY: number } | null>(null);

  // External systems: the canvas bitmap and the viewport store.
  useEffect(() => {
    const c = canvasRef.current;
    if (!c || width === 0) return;
    const draw = () => {
      const ctx = prepareCanvas(c, width, H);
      if (!ctx) return;
      const vp = store.get();
      const [r, g, b] = laneColors(theme.name).bubble;
      ctx.font = theme.font;
      ctx.textBaseline = "middle";
      ctx.textAlign = "center";
      ctx.fillStyle = theme.muted;
      ctx.textAlign = "left";
      ctx.fillText("wait / step", 8, H / 2);
      ctx.textAlign = "center";
      ctx.save();
      ctx.beginPath();
      ctx.rect(TIME_MARGIN.left, 0, width - TIME_MARGIN.left - TIME_MARGIN.right, H);
      ctx.clip();
      for (const s of stepsInView(steps, vp.v0, vp.v1)) {
        const x0 = timeToX(s.t0, vp, width);
        const x1 = timeToX(s.t1, vp, width);
        const w = Math.max(2, x1 - x0 - 1);
        ctx.fillStyle = `rgba(${r},${g},${b},${waitAlpha(s.waitRatio)})`;
        ctx.fillRect(x0 + 0.5, 2, w, H - 4);
        ctx.strokeStyle = s.step === current ? theme.accent : theme.border;
        ctx.lineWidth = s.step === current ? 2 : 1;
        ctx.strokeRect(x0 + 0.5, 2.5, w, H - 5);
        if (w > 22) {
          ctx.fillStyle = theme.text;
          ctx.fillText(String(s.step), x0 + w / 2, H / 2);
        }
      }
      ctx.restore();
      ctx.textAlign = "left";
    };
    draw();
    return subscribeFrames(store, draw);
  }, [steps, width, theme, store, current]);

  const stepFromEvent = (e: { clientX: number }) => {
    const r = boxRef.current!.getBoundingClientRect();
    const x = e.clientX - r.left;
    if (x < TIME_MARGIN.left || x > width - TIME_MARGIN.right) return null;
    return stepAt(steps, xToTime(x, store.get(), width));
  };

  const onClick = (e: ReactPointerEvent<HTMLDivElement>) => {
    const s = stepFromEvent(e);
    if (!s) return;
    if (e.shiftKey || e.metaKey || e.ctrlKey) props.onOpen(s.step);
    else props.onStep(s);
  };

  const cur = current !== null ? steps.find((s) => s.step === current) : undefined;
  const href = current !== null ? props.stepHref(current) : null;
  const tip: TooltipState | null = hover
    ? {
        clientX: hover.clientX,
        clientY: hover.clientY,
        content: (
          <>
            <div className="tip-title">step {hover.s.step}</div>
            <div>wait_ratio = {hover.s.waitRatio === null ? "—" : formatPercent(hover.s.waitRatio)}</div>
            <div>step_time = {hover.s.stepTime === null ? "—" : formatDuration(hover.s.stepTime)}</div>
            <div className="tip-hint">click: zoom to step · shift-click: open its rollouts</div>
          </>
        ),
      }
    : null;

  return (
    <section className="tl-steps" aria-label="Wait ratio per step" data-testid="step-strip" data-steps={steps.length} data-steps-in-view={inView.length}>
      <div className="control-row small">
        <span className="muted">Wait ratio / step</span>
        <span className="muted">
          {inView.length > 0 ? `steps ${inView[0]!.step}–${inView[inView.length - 1]!.step} in view` : "no step in view"} · {steps.length} total
        </span>
        {cur ? (
          <span className="zoom-pill">
            step {cur.step}: wait {cur.waitRatio === null ? "—" : formatPercent(cur.waitRatio)}, {cur.stepTime === null ? "—" : formatDuration(cur.stepTime)}
            {href ? (
              <Link className="link-btn" href={href}>
                open rollouts →
              </Link>
            ) : null}
          </span>
        ) : null}
        <span className="hint muted">[ ] = prev/next step</span>
      </div>
      <div
        ref={boxRef}
        className="steps-box"
        style={{ height: H }}
        onPointerUp={onClick}
        onPointerMove={(e) => {
          const s = stepFromEvent(e);
          setHover(s ? { s, clientX: e.clientX, clientY: e.clientY } : null);
        }}
        onPointerLeave={() => setHover(null)}
      >
        <canvas ref={canvasRef} style={{ width, height: H }} aria-hidden="true" />
      </div>
      <ChartTooltip tip={tip} />
    </section>
  );
}
