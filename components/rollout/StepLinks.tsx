"use client";
/**
 * Links of a Rollouts step (docs/views.md 4.7): its window on the Compute Utilization view
 * (the step's span on the step strip, i.e. its phases; without step timing, first submit →
 * consume from its trajectories) with the step picked, and the Metrics view's step cursor
 * on it. Where there is no window the reason is said in place.
 */
import { Link } from "@/components/shell/Link";
import { LinksLine } from "@/components/rollout/LinksLine";
import { useMeta, useBubbles } from "@/lib/client/telemetry-queries";
import type { GetRolloutTrajectoriesResponse } from "@/lib/contracts/rollout";
import { formatDuration } from "@/lib/charts/core/format";
import { metricsHref, stepWindow, timelineHref } from "@/lib/rollout-view/links";

function StepLinksItems({ runId, step, evaluation, traj }: { runId: string; step: number; evaluation: boolean; traj: GetRolloutTrajectoriesResponse | undefined }) {
  const meta = useMeta(runId);
  const hasTimeline = meta.data?.capabilities.has_timeline ?? false;
  // A step with a dump has been consumed: its bubble is there already (no polling).
  const bubbles = useBubbles(runId, false);
  let timeline: React.ReactNode;
  if (evaluation) {
    timeline = <span className="vl-note">evaluation rollouts have no step window on the Compute Utilization view</span>;
  } else if (!meta.data || (hasTimeline && bubbles.isPending)) {
    timeline = <span className="vl-note">Compute Utilization…</span>;
  } else if (!hasTimeline) {
    timeline = <span className="vl-note">no compute telemetry in this run (no phases or GPU samples): no timeline window</span>;
  } else {
    const w = stepWindow(step, bubbles.data?.bubbles, traj);
    timeline = w ? (
      <Link href={timelineHref(runId, w.window, { step })} data-testid="step-timeline-link" title={`window from the ${w.source} (${formatDuration(w.window.t1 - w.window.t0)})`}>
        step {step} on Compute Utilization →
      </Link>
    ) : (
      <span className="vl-note" data-testid="step-timeline-none">
        no window for step {step}: no step timing (perf/step_time) and no trajectory events
      </span>
    );
  }
  return (
    <>
      {timeline}
      <Link href={metricsHref(runId, step)} data-testid="step-metrics-link">
        metrics at step {step} →
      </Link>
    </>
  );
}

export function StepLinks(props: { runId: string; step: number; evaluation: boolean; traj: GetRolloutTrajectoriesResponse | undefined }) {
  return <LinksLine label="Links of this step">{() => <StepLinksItems {...props} />}</LinksLine>;
}
