import { withApi } from "@/lib/api/with-api";
import { GetTopologyQuery } from "@/lib/contracts/telemetry";
import { getTopology } from "@/lib/timeline/api";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetTopologyQuery }, async ({ run }) => getTopology(run.store));
