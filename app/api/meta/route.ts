import { withApi } from "@/lib/api/with-api";
import { GetMetaQuery } from "@/lib/contracts/telemetry";
import { getMeta } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetMetaQuery }, async ({ run }) => getMeta(run));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
