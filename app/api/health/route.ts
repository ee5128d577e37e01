import { withApi } from "@/lib/api/with-api";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Liveness for load balancers and `npm run serve`'s readiness wait: no login, no disk. */
export const GET = withApi({ auth: "public", run: false }, async () => ({ ok: true }));
