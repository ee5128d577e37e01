import { withApi } from "@/lib/api/with-api";
import { GetEngineSeriesQuery } from "@/lib/contracts/telemetry";
import { getEngineSeries } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetEngineSeriesQuery }, async ({ query, run }) => getEngineSeries(run.store, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
