import { withApi } from "@/lib/api/with-api";
import { GetAdvisoryQuery } from "@/lib/contracts/telemetry";
import { getAdvisory } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetAdvisoryQuery }, async ({ query, run }) => getAdvisory(run, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
