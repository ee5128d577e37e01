"use client";
/**
 * The drawn part of the Sample view's trace panel: the span timeline and one card per SGLang
 * call. Loaded on demand by TracePanel.tsx (next/dynamic) once the sample's trace answered,
 * so a sample without one (a miles run) never downloads this code.
 */
import type { GetSampleTraceResponse } from "@/lib/contracts/traces";
import { RequestCard } from "./RequestCard";
import { TraceTimeline } from "./TraceTimeline";

export function TraceBody({ trace: t }: { trace: GetSampleTraceResponse }) {
  return (
    <>
      <TraceTimeline trace={t} />
      {t.requests.length ? (
        <div className="tr-cards">
          {t.requests.map((c, i) => (
            <RequestCard key={c.span_id ?? i} card={c} n={i + 1} />
          ))}
        </div>
      ) : null}
    </>
  );
}
