import type { Metadata } from "next";
import { TimelineView } from "@/components/timeline/TimelineView";
import type { Meta, TopologyResponse } from "@/lib/charts/api-shapes";
import { GetMetaResponse, GetTopologyResponse } from "@/lib/contracts/telemetry";
import { getPageRunContext } from "@/lib/server/runs/page-run";
import { getMeta, getTopology } from "@/lib/timeline/api";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Compute Utilization" };

export default async function TimelinePage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const run = await getPageRunContext(runId);
  // First meta and topology read through lib (no request waterfall); on any problem the
  // client fetches them itself and shows the server's message.
  let meta: Meta | null = null;
  let topology: TopologyResponse | null = null;
  try {
    const [m, t] = await Promise.all([getMeta(run), getTopology(run.store)]);
    const pm = GetMetaResponse.safeParse(JSON.parse(JSON.stringify(m)));
    const pt = GetTopologyResponse.safeParse(JSON.parse(JSON.stringify(t)));
    if (pm.success) meta = pm.data;
    if (pt.success) topology = pt.data;
  } catch {
    meta = null;
  }
  return (
    <div className="run-body">
      <TimelineView runId={run.id} initialMeta={meta} initialTopology={topology} />
    </div>
  );
}
