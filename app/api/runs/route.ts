import { withApi } from "@/lib/api/with-api";
import { GetRunsQuery } from "@/lib/contracts/runs";
import { listRunsJudged } from "@/lib/server/runs/list-runs";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetRunsQuery, run: false }, async ({ query }) => listRunsJudged(query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
