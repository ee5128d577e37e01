import type { Metadata } from "next";
import { MetricsView } from "@/components/metrics/MetricsView";
import type { Meta } from "@/lib/charts/api-shapes";
import { GetMetaResponse } from "@/lib/contracts/telemetry";
import { getPageRunContext } from "@/lib/server/runs/page-run";
import { getMeta } from "@/lib/timeline/api";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Metrics" };

export default async function MetricsPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const run = await getPageRunContext(runId);
  // First meta read through lib (no request waterfall); on any problem the client fetches
  // it itself and shows the server's message.
  let meta: Meta | null = null;
  try {
    const parsed = GetMetaResponse.safeParse(JSON.parse(JSON.stringify(await getMeta(run))));
    if (parsed.success) meta = parsed.data;
  } catch {
    meta = null;
  }
  return (
    <div className="run-body">
      <MetricsView runId={run.id} initialMeta={meta} />
    </div>
  );
}
