import { withApi } from "@/lib/api/with-api";
import { encodeMetricsFrame } from "@/lib/contracts/metrics-frame";
import { GetMetricsQuery } from "@/lib/contracts/telemetry";
import { getMetrics } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** JSON by default; `format=bin` = the same answer as a binary column frame (docs/api.md 9.2). */
export const GET = withApi({ cost: "heavy", query: GetMetricsQuery }, async ({ query, run }) =>
  query.format === "bin"
    ? new Response(encodeMetricsFrame(await getMetrics(run.store, run.dumps, query)), { headers: { "content-type": "application/octet-stream" } })
    : getMetrics(run.store, run.dumps, query),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
