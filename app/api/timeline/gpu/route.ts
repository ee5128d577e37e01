import { withApi } from "@/lib/api/with-api";
import { GetGpuQuery } from "@/lib/contracts/telemetry";
import { getGpu } from "@/lib/timeline/api";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetGpuQuery }, async ({ query, run }) => getGpu(run.store, query));
