"use client";
/**
 * "Why is this empty" (docs/api.md 9.5.3): under a view's empty state, the first missing
 * input the view needs and what writes it — from the one table in lib/contracts/health.ts,
 * told present/missing by /api/run_status.
 */
import type { RunInputKey } from "@/lib/contracts/health";
import { firstMissing, useRunStatus } from "@/components/health/use-run-status";

export function WhyEmpty({ runId, inputs }: { runId: string; inputs: readonly RunInputKey[] }) {
  const status = useRunStatus(runId);
  const miss = firstMissing(status.data, inputs);
  if (!miss) return null;
  return (
    <p className="muted why-empty" data-testid="why-empty" data-input={miss.key}>
      Why: <Ticks text={miss.text} />.
    </p>
  );
}

/** `a \`code\` b` → text with <code> spans (the table's sentences quote flags and paths). */
export function Ticks({ text }: { text: string }) {
  return (
    <>
      {text.split("`").map((part, i) => (i % 2 ? <code key={i}>{part}</code> : <span key={i}>{part}</span>))}
    </>
  );
}
