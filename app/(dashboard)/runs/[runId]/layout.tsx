import { Link } from "@/components/shell/Link";
import type { ReactNode } from "react";
import { RunHealth } from "@/components/health/RunHealth";
import { RunTabs } from "@/components/run/RunTabs";
import { RunHeaderArgs } from "@/components/runs/RunHeaderArgs";
import "@/components/runs/runs.css";
import { getPageRunHeader } from "@/lib/server/runs/page-compare";

export const dynamic = "force-dynamic";

export default async function RunLayout({ children, params }: { children: ReactNode; params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const { run, args, wandbUrl } = await getPageRunHeader(runId);
  const base = `/runs/${encodeURIComponent(run.id)}`;
  return (
    <div className="run-shell">
      <div className="run-header">
        <div className="run-title">
          <Link href="/" className="muted">
            Runs
          </Link>
          <span className="muted">›</span>
          <h1 title={run.id}>{run.name}</h1>
          {run.live ? <span className="badge badge-live">live</span> : null}
          <RunHealth runId={run.id} />
        </div>
        <RunHeaderArgs args={args} wandbUrl={wandbUrl} />
        <RunTabs base={base} hasTimeline={run.hasTimeline} hasDumps={run.hasDumps} />
      </div>
      {children}
    </div>
  );
}
