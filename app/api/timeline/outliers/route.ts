import { withApi } from "@/lib/api/with-api";
import { GetOutliersQuery } from "@/lib/contracts/telemetry";
import { getOutliers } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetOutliersQuery }, async ({ query, run }) => getOutliers(run.store, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
