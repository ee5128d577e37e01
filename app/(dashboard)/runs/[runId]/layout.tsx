import { Link } from "@/components/shell/Link";
import type { ReactNode } from "react";
import { AdvisoryStrip } from "@/components/health/AdvisoryStrip";
import { RunHealth } from "@/components/health/RunHealth";
import { ExportButton } from "@/components/export/ExportButton";
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
          {/* One run state: run_status's lifecycle (the run list shows the same), never a second "live" pill from file mtimes (#15 defect 6). */}
          <RunHealth runId={run.id} />
          <ExportButton runId={run.id} />
        </div>
        <RunHeaderArgs args={args} wandbUrl={wandbUrl} />
        <RunTabs base={base} hasTimeline={run.hasTimeline} hasDumps={run.hasDumps} />
        {/* last on the row: it arrives after the view's requests and takes only the room left (health.css) */}
        <AdvisoryStrip runId={run.id} />
      </div>
      {children}
    </div>
  );
}
