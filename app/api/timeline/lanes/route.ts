import { withApi } from "@/lib/api/with-api";
import { GetTimelineLanesQuery } from "@/lib/contracts/timeline-lanes";
import { getTimelineLanes } from "@/lib/timeline/lanes";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Resolve a lane selection to the run's lanes (docs/api.md 8.8): 400 with the grammar's message. */
export const GET = withApi({ query: GetTimelineLanesQuery }, async ({ query, run }) => getTimelineLanes(run.store, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
