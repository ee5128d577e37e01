import { withApi } from "@/lib/api/with-api";
import { GetMetricsQuery } from "@/lib/contracts/telemetry";
import { getMetrics } from "@/lib/timeline/api";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetMetricsQuery }, async ({ query, run }) => getMetrics(run.store, run.dumps, query));
