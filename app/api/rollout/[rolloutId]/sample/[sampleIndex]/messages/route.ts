import { withApi } from "@/lib/api/with-api";
import { GetSampleMessagesQuery, SampleParams } from "@/lib/contracts/rollout";
import { getSampleMessages } from "@/lib/rollout";
import { guardTrajectoryRead } from "@/lib/server/auth/trajectory-guard";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { query: GetSampleMessagesQuery, params: SampleParams },
  async ({ query, params, run, user }) => {
    guardTrajectoryRead(run.id, user, { step: params.rolloutId, sample: params.sampleIndex, kind: "messages" });
    return getSampleMessages(run.dumps, params.rolloutId, params.sampleIndex, query.eval);
  },
);
