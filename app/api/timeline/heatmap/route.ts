import { withApi } from "@/lib/api/with-api";
import { GetHeatmapQuery } from "@/lib/contracts/telemetry";
import { getHeatmapFrame } from "@/lib/timeline/api";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Binary frame (lib/contracts/binary.ts): u32 LE header length, JSON header, u8 matrix. */
export const GET = withApi(
  { cost: "heavy", query: GetHeatmapQuery, trajectories: (q) => (q.metric === "lifecycle" ? "lifecycle" : null) },
  async ({ query, run }) =>
    new Response(await getHeatmapFrame(run.store, query), { headers: { "content-type": "application/octet-stream" } }),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
