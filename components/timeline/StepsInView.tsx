"use client";
/**
 * What the visible window holds (docs/views.md 3.13): the window itself, the steps whose
 * span on the step strip overlaps it — each a link to its Rollouts view and to the Metrics
 * step cursor — and, on request (one trajectories answer per step), the samples whose
 * generation overlaps the window, each a link to its Sample view. An async trainer consumes
 * rollouts generated during earlier steps, so the next steps after the ones in view are
 * searched too (lib/rollout-view/links.ts `candidateSteps`).
 */
import { Link } from "@/components/shell/Link";
import { useMemo, useState } from "react";
import { formatDuration } from "@/lib/charts/core/format";
import { stepsInView, type StepSpan } from "@/lib/charts/prepare-bubbles";
import type { Win } from "@/lib/client/telemetry-queries";
import { useTrajectories } from "@/lib/client/rollout-queries";
import { candidateSteps, metricsHref, samplesGeneratingIn } from "@/lib/rollout-view/links";
import { sampleHref, stepHref } from "@/lib/rollout-view/nav";
import { formatTime, type TimeFormat } from "@/components/timeline/LaneCanvas";
import "@/components/rollout/links.css";

/** Sample links listed per step before "+N more". */
const SAMPLES_SHOWN = 24;

export function StepsInView({ runId, steps, win, trainIds, fmt }: { runId: string; steps: readonly StepSpan[]; win: Win; trainIds: readonly number[]; fmt: TimeFormat }) {
  const [open, setOpen] = useState(false);
  const inView = useMemo(() => stepsInView(steps, win.t0, win.t1).map((s) => s.step), [steps, win.t0, win.t1]);
  const train = useMemo(() => new Set(trainIds), [trainIds]);
  const search = useMemo(() => candidateSteps(inView, trainIds), [inView, trainIds]);
  return (
    <section className="panel tl-panel vl-steps" aria-label="Steps in view" data-testid="steps-in-view" data-v0={win.t0} data-v1={win.t1}>
      <div className="control-row small">
        <b>In this window</b>
        <span data-testid="window-range">
          {formatTime(win.t0, fmt)} – {formatTime(win.t1, fmt)} ({formatDuration(win.t1 - win.t0)})
        </span>
        <span className="muted">
          {inView.length ? `${inView.length} step${inView.length === 1 ? "" : "s"}` : "no step in this window"}
          {steps.length === 0 ? " (the run logs no perf/step_time)" : ""}
        </span>
        {search.length ? (
          <button type="button" className="link-btn" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? "hide samples" : "samples generated in this window"}
          </button>
        ) : null}
      </div>
      {inView.length || open ? (
        <ul aria-label="Steps in this window">
          {(open ? [...new Set([...inView, ...search])].sort((a, b) => a - b) : inView).map((s) => (
            <li key={s} data-step={s}>
              <b>step {s}</b>
              {train.has(s) ? <Link href={stepHref(runId, s, false)}>rollouts →</Link> : <span className="muted">no rollout dump</span>}
              <Link href={metricsHref(runId, s)}>metrics →</Link>
              {!inView.includes(s) ? <span className="muted">(after the window: its rollouts may have been generated in it)</span> : null}
              {open && train.has(s) ? <StepSamples runId={runId} step={s} win={win} /> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function StepSamples({ runId, step, win }: { runId: string; step: number; win: Win }) {
  const traj = useTrajectories(runId, step, null, true);
  const idx = useMemo(() => (traj.data ? samplesGeneratingIn(traj.data.lanes, win.t0, win.t1) : null), [traj.data, win.t0, win.t1]);
  if (traj.isError) return <span className="muted">samples: could not load the trajectories</span>;
  if (!traj.data || idx === null) return <span className="muted">samples…</span>;
  if (traj.data.lanes.length === 0) return <span className="muted" data-testid="step-samples-none">no trajectory events for this step</span>;
  if (idx.length === 0) return <span className="muted" data-testid="step-samples-none">no sample generating in this window</span>;
  return (
    <span className="vl-samples" aria-label={`Samples of step ${step} generating in this window`} data-count={idx.length}>
      <span className="muted">
        {idx.length} sample{idx.length === 1 ? "" : "s"} generating:
      </span>
      {idx.slice(0, SAMPLES_SHOWN).map((i) => (
        <Link key={i} href={sampleHref(runId, step, i, false)}>
          s{i}
        </Link>
      ))}
      {idx.length > SAMPLES_SHOWN ? <Link href={stepHref(runId, step, false)}>+{idx.length - SAMPLES_SHOWN} more</Link> : null}
    </span>
  );
}
