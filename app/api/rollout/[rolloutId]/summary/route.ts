import { withApi } from "@/lib/api/with-api";
import { GetRolloutSummaryQuery, RolloutParams } from "@/lib/contracts/rollout";
import { getRolloutSummary } from "@/lib/rollout";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetRolloutSummaryQuery, params: RolloutParams }, async ({ query, params, run }) =>
  getRolloutSummary(run.dumps, params.rolloutId, query.eval),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
