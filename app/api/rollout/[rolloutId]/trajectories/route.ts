import { withApi } from "@/lib/api/with-api";
import { GetRolloutTrajectoriesQuery, RolloutParams } from "@/lib/contracts/rollout";
import { getRolloutTrajectories, storeTimeline } from "@/lib/rollout";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { cost: "heavy", trajectories: "lifecycle", query: GetRolloutTrajectoriesQuery, params: RolloutParams },
  async ({ query, params, run }) =>
    getRolloutTrajectories(run.dumps, storeTimeline(run.store), params.rolloutId, query.sample_index),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
