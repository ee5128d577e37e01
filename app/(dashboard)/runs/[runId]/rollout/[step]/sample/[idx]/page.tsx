import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { SampleClient } from "@/components/sample/SampleClient";
import { getPageRunContext } from "@/lib/server/runs/page-run";
import { StepNotFound } from "@/components/rollout/StepNotFound";
import { isEvalParam } from "@/lib/rollout-view/nav";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ runId: string; step: string; idx: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { step, idx } = await params;
  return { title: `Sample ${idx} · step ${step}` };
}

export default async function SamplePage({ params, searchParams }: Props) {
  const { runId, step, idx } = await params;
  const evaluation = isEvalParam((await searchParams).eval);
  const ctx = await getPageRunContext(runId);
  const ids = await ctx.dumps.listRolloutIds();
  const n = /^-?\d+$/.test(step) ? Number(step) : Number.NaN;
  if (!(evaluation ? ids.eval : ids.train).includes(n)) return <StepNotFound runId={ctx.id} step={step} evaluation={evaluation} ids={ids} />;
  if (!/^-?\d+$/.test(idx)) notFound();
  return <SampleClient runId={ctx.id} step={n} evaluation={evaluation} sampleIndex={Number(idx)} hasTokenizer={await ctx.dumps.hasTokenizer()} />;
}
