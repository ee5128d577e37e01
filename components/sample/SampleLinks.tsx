"use client";
/**
 * Links of a sample (docs/views.md 6.5): its generation spans on the Compute Utilization
 * lanes — the window of its trajectory's `gen` segments (else its request trace's SGLang
 * calls), the engines its requests name as the lane selection — the Metrics view's step
 * cursor on its step, and the step's drift tab. What the run does not record is said in place.
 */
import { Link } from "@/components/shell/Link";
import { LinksLine } from "@/components/rollout/LinksLine";
import { useMeta } from "@/lib/client/telemetry-queries";
import type { GetRolloutTrajectoriesResponse } from "@/lib/contracts/rollout";
import { formatDuration } from "@/lib/charts/core/format";
import { engineLanes, metricsHref, sampleEngines, sampleGenSpans, spansWindow, timelineHref } from "@/lib/rollout-view/links";
import { stepHref } from "@/lib/rollout-view/nav";
import { useSampleTrace } from "./trace/TracePanel";

function SampleLinksItems(props: { runId: string; step: number; evaluation: boolean; sampleIndex: number; traj: GetRolloutTrajectoriesResponse | undefined; trajSettled: boolean }) {
  const { runId, step, evaluation, sampleIndex, traj } = props;
  const meta = useMeta(runId);
  const trace = useSampleTrace(runId, step, evaluation, sampleIndex);
  // A 404 is the answer "no trace" (TracePanel); any settled state lets the links decide.
  const traceSettled = !trace.isPending;
  const hasTimeline = meta.data?.capabilities.has_timeline ?? false;
  const lane = traj?.lanes.find((l) => l.sample_index === sampleIndex) ?? null;
  const requests = trace.data?.requests ?? null;
  const spans = sampleGenSpans(lane, requests);
  const engines = sampleEngines(requests);
  const win = spansWindow(spans);

  let lanes: React.ReactNode;
  if (!meta.data || (!evaluation && !props.trajSettled) || !traceSettled) {
    lanes = <span className="vl-note">generation spans…</span>;
  } else if (!hasTimeline) {
    lanes = <span className="vl-note">no compute telemetry in this run (no phases or GPU samples): no lanes to show its generation on</span>;
  } else if (!win) {
    lanes = (
      <span className="vl-note" data-testid="sample-lanes-none">
        {evaluation
          ? "eval sample without a request trace: when it generated is not recorded"
          : "no generation recorded for this sample (no trajectory gen events, no request trace): its time on the lanes is unknown"}
      </span>
    );
  } else {
    const sel = engineLanes(engines);
    const t0 = spans[0]!.t0;
    lanes = (
      <>
        <Link href={timelineHref(runId, win, { step: evaluation ? null : step, lanes: sel })} data-testid="sample-timeline-link">
          generation on the lanes →
        </Link>
        <span className="vl-note" data-testid="sample-gen-spans">
          {spans.length} generation span{spans.length === 1 ? "" : "s"} over {formatDuration(win.t1 - win.t0)}
          {spans.length <= 4 ? ` (${spans.map((s) => `${s.turn !== null ? `turn ${s.turn} ` : ""}+${formatDuration(s.t0 - t0)} for ${formatDuration(s.t1 - s.t0)}`).join(", ")})` : ""}
          {engines.length ? ` · engine ${engines.join(", ")}` : " · engine not recorded (the lanes keep their selection)"}
        </span>
      </>
    );
  }
  return (
    <>
      {lanes}
      <Link href={metricsHref(runId, step)} data-testid="sample-metrics-link">
        metrics at step {step} →
      </Link>
      {!evaluation ? (
        <Link href={stepHref(runId, step, false, "tab=drift")} data-testid="sample-drift-link">
          drift of step {step} →
        </Link>
      ) : null}
    </>
  );
}

export function SampleLinks(props: { runId: string; step: number; evaluation: boolean; sampleIndex: number; traj: GetRolloutTrajectoriesResponse | undefined; trajSettled: boolean }) {
  return <LinksLine label="Links of this sample">{() => <SampleLinksItems {...props} />}</LinksLine>;
}
