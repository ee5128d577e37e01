import { withApi } from "@/lib/api/with-api";
import { GetSampleTokensQuery, SampleParams } from "@/lib/contracts/rollout";
import { getSampleTokens } from "@/lib/rollout";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { cost: "heavy", trajectories: "tokens", query: GetSampleTokensQuery, params: SampleParams },
  async ({ query, params, run }) => {
    return getSampleTokens(run.dumps, params.rolloutId, params.sampleIndex, query);
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
