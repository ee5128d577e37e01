"use client";
/**
 * Request traces of a step (docs/views.md 5 "request traces"): every sample's trace as one
 * swimlane on the step's time axis — the sample span behind, its SGLang calls, PD prefill /
 * decode and reward spans in front — sortable by start, e2e latency, queue time or cached
 * tokens (URL `tsort`); click a lane to open the sample. Steps whose dump carries no traces
 * (404) show nothing. The drawing (TraceSwimlanes.tsx) loads only once traces answered;
 * until then a box of its height holds the place.
 */
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import type { GetStepTracesResponse } from "@/lib/contracts/traces";
import { apiJson } from "@/lib/client/fetcher";
import { isNotFound, QueryError } from "@/components/rollout/QueryError";
import { swimlanesHeight } from "./layout";

const Swimlanes = dynamic(() => import("./TraceSwimlanes").then((m) => m.Swimlanes), { loading: () => null });

export function stepTracesUrl(runId: string, step: number, evaluation: boolean): string {
  const q = new URLSearchParams({ run: runId });
  if (evaluation) q.set("eval", "true");
  return `/api/rollout/${step}/traces?${q.toString()}`;
}

export function StepTraces({ runId, step, evaluation, onOpen }: { runId: string; step: number; evaluation: boolean; onOpen: (sampleIndex: number) => void }) {
  const q = useQuery({
    queryKey: ["rollout", runId, step, evaluation, "traces"],
    queryFn: () => apiJson<GetStepTracesResponse>(stepTracesUrl(runId, step, evaluation)),
    staleTime: 5 * 60_000,
    retry: (n, e) => !isNotFound(e) && n < 2,
  });
  if (q.isError) return isNotFound(q.error) ? null : <QueryError error={q.error} what="the request traces" />;
  if (!q.data) return null;
  return (
    <div style={{ minHeight: swimlanesHeight(q.data.rows.length) }}>
      <Swimlanes data={q.data} step={step} onOpen={onOpen} />
    </div>
  );
}
