import { withApi } from "@/lib/api/with-api";
import { GetRunStatusQuery } from "@/lib/contracts/health";
import { runStatusOf } from "@/lib/health/server";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Lifecycle, log signals and inputs of one run (docs/api.md 9.5). */
export const GET = withApi({ cost: "heavy", query: GetRunStatusQuery }, async ({ run }) => runStatusOf(run));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
