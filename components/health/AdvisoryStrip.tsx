"use client";
/**
 * The run's advisories on every view (docs/api.md 10; issue #16 part 5): a compact strip in
 * the run header — the count per level and the worst message, opened: every advisory.
 * `/api/advisory` judges from whatever inputs the run has (telemetry, dumps or both), so a
 * dump-only run shows its rollout alarms (zero-std groups, truncation) here too, not only
 * the Compute Utilization view. Nothing is drawn when there is nothing to say.
 */
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { AdvisoryResponse } from "@/lib/charts/api-shapes";
import { apiJson } from "@/lib/client/fetcher";
import { useAfterFirstIdle } from "@/lib/client/idle";
import { useShortcuts } from "@/components/charts/use-shortcuts";
import { telemetryKeys, timelineUrls } from "@/lib/client/telemetry-queries";
import { advisoryCounts, sortAdvisories } from "@/lib/health/advisory-strip";
import "@/components/health/health.css";

/** The strip re-asks every 30 s (the run list's state refreshes at the same pace). */
const REFRESH_MS = 30_000;
const SHORT = 110;

export function AdvisoryStrip({ runId }: { runId: string }) {
  // asked once the browser is first idle: the view's own requests go first
  const idle = useAfterFirstIdle();
  const q = useQuery({
    enabled: idle,
    queryKey: telemetryKeys.advisory(runId),
    queryFn: () => apiJson<AdvisoryResponse>(timelineUrls.advisory(runId)),
    refetchInterval: REFRESH_MS,
    staleTime: 10_000,
  });
  const [open, setOpen] = useState(false);
  const boxRef = useRef<HTMLDivElement>(null);
  // the opened list floats over the view: Escape or a press outside it closes it
  useShortcuts((e) => {
    if (!open || e.key !== "Escape") return false;
    setOpen(false);
    return true;
  });
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (!boxRef.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
  }, [open]);
  const list = q.data ? sortAdvisories(q.data.advisories) : [];
  if (list.length === 0) return null;
  const counts = advisoryCounts(list);
  const top = list[0]!;
  const short = top.message.length > SHORT ? `${top.message.slice(0, SHORT)}…` : top.message;
  return (
    <div ref={boxRef} className={`advisory-strip advisory-strip-${top.level}`} data-testid="advisory-strip" data-level={top.level} role="status">
      <button type="button" className="link-btn advisory-strip-toggle" aria-expanded={open} onClick={() => setOpen((o) => !o)} title={top.message}>
        <span className="advisory-strip-counts">
          {(["critical", "warning", "info"] as const)
            .filter((l) => counts[l] > 0)
            .map((l) => (
              <span key={l} className={`adv-count adv-${l}`} data-level={l}>
                {l === "critical" ? "⚠" : l === "warning" ? "△" : "ℹ"} {counts[l]} {l}
              </span>
            ))}
        </span>
        <span className="advisory-strip-top">{open ? "advisories" : short}</span>
      </button>
      {open ? (
        <ul className="advisory-strip-list" data-testid="advisory-strip-list">
          {list.map((a, i) => (
            <li key={i} className={`adv-${a.level}`} data-level={a.level}>
              <strong>{a.level}</strong> {a.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
