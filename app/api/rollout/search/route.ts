import { withApi } from "@/lib/api/with-api";
import { GetRolloutSearchQuery, parseSteps } from "@/lib/contracts/drift";
import { searchRollouts } from "@/lib/rollout/search";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetRolloutSearchQuery }, async ({ query, run }) =>
  searchRollouts(run.dumps, { q: query.q, regex: query.regex, range: parseSteps(query.steps), evaluation: query.eval }),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
