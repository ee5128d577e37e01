import { withApi } from "@/lib/api/with-api";
import { GetTopologyQuery } from "@/lib/contracts/telemetry";
import { getTopology } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetTopologyQuery }, async ({ run }) => getTopology(run.store));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
