import { withApi } from "@/lib/api/with-api";
import { GetCompareQuery } from "@/lib/contracts/compare";
import { getCompare } from "@/lib/server/runs/compare";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = withApi({ query: GetCompareQuery, run: false, cost: "heavy" }, async ({ query, user }) => getCompare(query.runs, user!));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
