import { withApi } from "@/lib/api/with-api";
import { GetOutliersQuery } from "@/lib/contracts/telemetry";
import { getOutliers } from "@/lib/timeline/api";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetOutliersQuery }, async ({ query, run }) => getOutliers(run.store, query));
