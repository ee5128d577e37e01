import { withApi } from "@/lib/api/with-api";
import { GetPhasesQuery } from "@/lib/contracts/telemetry";
import { getPhases, getPhasesFrame } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** JSON by default; `format=bin` = the same answer as a binary column frame (the dashboard's own format). */
export const GET = withApi({ cost: "heavy", query: GetPhasesQuery }, async ({ query, run }) =>
  query.format === "bin"
    ? new Response(await getPhasesFrame(run.store, query), { headers: { "content-type": "application/octet-stream" } })
    : getPhases(run.store, query),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
