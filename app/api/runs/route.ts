import { withApi } from "@/lib/api/with-api";
import { GetRunsQuery } from "@/lib/contracts/runs";
import { listRunsJudged } from "@/lib/server/runs/list-runs";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetRunsQuery, run: false }, async ({ query }) => listRunsJudged(query));
