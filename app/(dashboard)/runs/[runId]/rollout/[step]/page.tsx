import type { Metadata } from "next";
import { RolloutStepClient } from "@/components/rollout/RolloutStepClient";
import { getPageRunContext, getPageRunOrNotFound } from "@/lib/server/runs/page-run";
import { StepNotFound } from "@/components/rollout/StepNotFound";
import { isEvalParam } from "@/lib/rollout-view/nav";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ runId: string; step: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params, searchParams }: Props): Promise<Metadata> {
  const { step } = await params;
  return { title: `${isEvalParam((await searchParams).eval) ? "Eval" : "Step"} ${step} · Rollouts` };
}

export default async function RolloutStepPage({ params, searchParams }: Props) {
  const { runId, step } = await params;
  const evaluation = isEvalParam((await searchParams).eval);
  const run = await getPageRunOrNotFound(runId);
  const ctx = await getPageRunContext(runId);
  const ids = await ctx.dumps.listRolloutIds();
  const n = /^-?\d+$/.test(step) ? Number(step) : Number.NaN;
  if (!(evaluation ? ids.eval : ids.train).includes(n)) return <StepNotFound runId={ctx.id} step={step} evaluation={evaluation} ids={ids} />;
  // Start the step's join now; the client's summary request joins it instead of starting late.
  if (!evaluation) void ctx.dumps.prewarm(n);
  return <RolloutStepClient runId={ctx.id} step={n} evaluation={evaluation} ids={ids} live={run.live} />;
}
