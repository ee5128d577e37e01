import { withApi } from "@/lib/api/with-api";
import { GetSampleTraceQuery, SampleParams } from "@/lib/contracts/traces";
import { getSampleTrace } from "@/lib/rollout/traces";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi(
  { cost: "heavy", trajectories: "lifecycle", query: GetSampleTraceQuery, params: SampleParams },
  async ({ query, params, run }) => getSampleTrace(run, params.rolloutId, params.sampleIndex, query.eval),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
