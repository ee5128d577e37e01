"use client";
/**
 * The Sample view's trace panel (docs/views.md 6 "trace"): the trace timeline and one card
 * per SGLang call, from `GET /api/rollout/{id}/sample/{idx}/trace`. A sample without a trace
 * (a miles run, an older slime) shows nothing: the 404 is the answer, not an error.
 */
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import type { GetSampleTraceResponse } from "@/lib/contracts/traces";
import { apiJson } from "@/lib/client/fetcher";
import { isNotFound, QueryError } from "@/components/rollout/QueryError";
import { layoutTrace } from "./layout";

/** The timeline and the request cards load with the answer; `traceBodyHeight` holds their place. */
const TraceBody = dynamic(() => import("./TraceBody").then((m) => m.TraceBody), { loading: () => null });

/**
 * About the drawn height: the timeline (TraceTimeline: 20 px rows under a 20 px axis) and the
 * request cards (~200 px a row, up to 3 a row at the usual width).
 */
function traceBodyHeight(t: GetSampleTraceResponse): number {
  return 20 + layoutTrace(t).rows.length * 20 + 6 + Math.ceil(t.requests.length / 3) * 200;
}

export function sampleTraceUrl(runId: string, step: number, sampleIndex: number, evaluation: boolean): string {
  const q = new URLSearchParams({ run: runId });
  if (evaluation) q.set("eval", "true");
  return `/api/rollout/${step}/sample/${sampleIndex}/trace?${q.toString()}`;
}

/** The sample's request trace (404 = it has none); shared by the panel and the Sample view's links. */
export function useSampleTrace(runId: string, step: number, evaluation: boolean, sampleIndex: number) {
  return useQuery({
    queryKey: ["rollout", runId, step, evaluation, "trace", sampleIndex],
    queryFn: () => apiJson<GetSampleTraceResponse>(sampleTraceUrl(runId, step, sampleIndex, evaluation)),
    staleTime: 5 * 60_000,
    retry: (n, e) => !isNotFound(e) && n < 2,
  });
}

export function TracePanel({ runId, step, evaluation, sampleIndex }: { runId: string; step: number; evaluation: boolean; sampleIndex: number }) {
  const q = useSampleTrace(runId, step, evaluation, sampleIndex);
  if (q.isError) return isNotFound(q.error) ? null : <QueryError error={q.error} what="the request trace" />;
  if (!q.data) return null;
  const t = q.data;
  return (
    <section className="rv-panel" aria-labelledby="sv-trace-title" data-testid="trace-panel">
      <h2 id="sv-trace-title" className="rv-panel-title">
        Request trace — spans, PD lanes [P] / [D], {t.requests.length} SGLang call{t.requests.length === 1 ? "" : "s"}
        {t.trace_id ? <span className="muted"> · trace {t.trace_id.slice(0, 12)}</span> : null}
      </h2>
      <div style={{ minHeight: traceBodyHeight(t) }}>
        <TraceBody trace={t} />
      </div>
    </section>
  );
}
