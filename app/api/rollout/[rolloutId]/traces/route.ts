import { withApi } from "@/lib/api/with-api";
import { GetStepTracesQuery, RolloutParams } from "@/lib/contracts/traces";
import { getStepTraces } from "@/lib/rollout/traces";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { cost: "heavy", trajectories: "lifecycle", query: GetStepTracesQuery, params: RolloutParams },
  async ({ query, params, run }) => getStepTraces(run, params.rolloutId, query.eval),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
