import { withApi } from "@/lib/api/with-api";
import { GetPhasesQuery } from "@/lib/contracts/telemetry";
import { getPhases } from "@/lib/timeline/api";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetPhasesQuery }, async ({ query, run }) => getPhases(run.store, query));
