import { withApi } from "@/lib/api/with-api";
import { requestWarmupSettled } from "@/lib/server/warmup";
import { GET_ONLY } from "@/lib/api/errors";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Liveness for load balancers and `npm run serve`'s readiness wait: no login, no disk. Right
 * after a start it answers once the warm-up's requests to the server itself are done
 * (lib/server/warmup.ts, phase 3; bounded), so "ready" means the first request of a user
 * does not pay Next's first pass; afterwards at once.
 */
export const GET = withApi({ auth: "public", run: false }, async () => {
  await requestWarmupSettled();
  return { ok: true };
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = GET_ONLY;
