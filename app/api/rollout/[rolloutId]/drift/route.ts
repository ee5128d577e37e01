import { withApi } from "@/lib/api/with-api";
import { GetRolloutDriftQuery } from "@/lib/contracts/drift";
import { RolloutParams } from "@/lib/contracts/rollout";
import { getRolloutDriftView } from "@/lib/rollout/drift";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetRolloutDriftQuery, params: RolloutParams }, async ({ query, params, run }) =>
  getRolloutDriftView(run.dumps, params.rolloutId, query),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
