import { withApi } from "@/lib/api/with-api";
import { GetFleetQuery } from "@/lib/contracts/telemetry";
import { getFleet } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetFleetQuery }, async ({ query, run }) => getFleet(run.store, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
