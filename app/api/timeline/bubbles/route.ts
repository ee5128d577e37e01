import { withApi } from "@/lib/api/with-api";
import { GetBubblesQuery } from "@/lib/contracts/telemetry";
import { getBubbles } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetBubblesQuery }, async ({ run }) => getBubbles(run.store));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
