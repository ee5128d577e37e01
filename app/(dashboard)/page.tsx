import type { Metadata } from "next";
import { RunList } from "@/components/runs/RunList";
import { getPageRuns } from "@/lib/server/runs/page-run";

export const metadata: Metadata = { title: "Runs" };
export const dynamic = "force-dynamic";

export default async function RunsPage() {
  const { runs: initial } = await getPageRuns();
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
