import { withApi } from "@/lib/api/with-api";
import { GetSampleTokensQuery, SampleParams } from "@/lib/contracts/rollout";
import { getSampleTokens } from "@/lib/rollout";
import { guardTrajectoryRead } from "@/lib/server/auth/trajectory-guard";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { query: GetSampleTokensQuery, params: SampleParams },
  async ({ query, params, run, user }) => {
    guardTrajectoryRead(run.id, user, { step: params.rolloutId, sample: params.sampleIndex, kind: "tokens" });
    return getSampleTokens(run.dumps, params.rolloutId, params.sampleIndex, query);
  },
);
