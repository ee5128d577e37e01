import { withApi } from "@/lib/api/with-api";
import { GetGpuQuery } from "@/lib/contracts/telemetry";
import { getGpu, getGpuFrame } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** JSON by default; `format=bin` = the same answer as a binary column frame (the dashboard's own format). */
export const GET = withApi({ cost: "heavy", query: GetGpuQuery }, async ({ query, run }) =>
  query.format === "bin"
    ? new Response(await getGpuFrame(run.store, query), { headers: { "content-type": "application/octet-stream" } })
    : getGpu(run.store, query),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
