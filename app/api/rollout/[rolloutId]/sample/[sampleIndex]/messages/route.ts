import { withApi } from "@/lib/api/with-api";
import { GetSampleMessagesQuery, SampleParams } from "@/lib/contracts/rollout";
import { getSampleMessages } from "@/lib/rollout";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { cost: "heavy", trajectories: "messages", query: GetSampleMessagesQuery, params: SampleParams },
  async ({ query, params, run }) => {
    return getSampleMessages(run.dumps, params.rolloutId, params.sampleIndex, query.eval);
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
