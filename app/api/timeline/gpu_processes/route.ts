import { withApi } from "@/lib/api/with-api";
import { GetGpuProcessesQuery } from "@/lib/contracts/telemetry";
import { getGpuProcesses } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ cost: "heavy", query: GetGpuProcessesQuery }, async ({ query, run }) => getGpuProcesses(run.store, query));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
