import { redirect } from "next/navigation";
import { WhyEmpty } from "@/components/health/WhyEmpty";
import { getPageRunContext } from "@/lib/server/runs/page-run";
import { stepHref } from "@/lib/rollout-view/nav";

export const dynamic = "force-dynamic";

/** `/runs/<id>/rollout` → the newest train step (else the newest eval step), or why there is none. */
export default async function RolloutIndex({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const ctx = await getPageRunContext(runId);
  const ids = await ctx.dumps.listRolloutIds();
  const train = ids.train.at(-1);
  if (train !== undefined) void ctx.dumps.prewarm(train);
  if (train !== undefined) redirect(stepHref(ctx.id, train, false));
  const ev = ids.eval.at(-1);
  if (ev !== undefined) redirect(stepHref(ctx.id, ev, true));
  return (
    <div className="rv-notfound">
      <h2>No rollout dumps in this run</h2>
      <p className="muted">
        The Rollouts view reads the per-step dumps the trainer writes into the run directory: <code>rollout_data/&lt;step&gt;.pt</code> (and{" "}
        <code>eval_&lt;step&gt;.pt</code>), joined with <code>train_data/&lt;step&gt;_&lt;rank&gt;.pt</code> when present. None were found yet. A dump
        younger than a few seconds is hidden until it is complete; on a live run this page shows the first step as soon as it appears after a reload.
      </p>
      <WhyEmpty runId={ctx.id} inputs={["rollout_dumps"]} />
    </div>
  );
}
