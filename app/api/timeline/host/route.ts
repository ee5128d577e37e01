import { withApi } from "@/lib/api/with-api";
import { GetHostQuery } from "@/lib/contracts/health";
import { getHost } from "@/lib/health/host";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Host CPU, memory and job processes per node (docs/api.md 9.5.6). */
export const GET = withApi({ cost: "heavy", query: GetHostQuery }, async ({ query, run }) => getHost(run.store.fs, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
