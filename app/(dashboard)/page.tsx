import type { Metadata } from "next";
import { RunList } from "@/components/runs/RunList";
import { listRuns } from "@/lib/runs/list-runs";

export const metadata: Metadata = { title: "Runs" };
export const dynamic = "force-dynamic";

export default async function RunsPage() {
  const initial = listRuns();
  return (
    <main className="page">
      <h1>Runs</h1>
      <p className="muted" style={{ margin: 0 }}>
        Every run under the lab&apos;s runs roots. Live runs were written to in the last minute.
      </p>
      <RunList initial={initial} />
    </main>
  );
}
