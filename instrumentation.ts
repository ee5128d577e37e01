/**
 * Next's once-per-server-process hook (Node runtime only): starts the alert loop when
 * `serve --alert-webhook` named webhooks (docs/api.md 9.5.5), sizes the parse workers'
 * pool (`RLBOARD_PARSE_WORKERS`, lib/store/telemetry/parse-pool.ts), and warms the server
 * (lib/server/warmup.ts): the API routes' modules, the database, the run registry and the
 * newest runs' stores, so the first request after a start does not pay for them (#20).
 *
 * Next 16 accepts connections before it calls this hook and holds requests until it
 * returns, so the warm-up is awaited — a request that raced a background warm-up would wait
 * for whatever module load is running (measured: the first `/api/meta` 125–320 ms that way,
 * 30–55 ms awaited). It is bounded: after WARMUP_AWAIT_MS the hook returns and the rest
 * continues in the background. Then it sends the requests that warm Next's own request path
 * (phase 3 of lib/server/warmup.ts), which Next serves as soon as this hook has returned.
 * RLBOARD_WARMUP=0 turns it off.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const [{ ensureAlertLoop }, warmup, { serverEnv }, { setParseWorkers }] = await Promise.all([
    import("@/lib/server/alerts"),
    import("@/lib/server/warmup"),
    import("@/lib/env"),
    import("@/lib/store/telemetry"),
  ]);
  ensureAlertLoop();
  setParseWorkers(serverEnv().parseWorkers);
  if (!warmup.warmUpEnabled()) return;
  await warmup.warmUp();
  // Requests to itself: held by Next until this hook returns, then served first. Not under
  // `next dev`, which compiles each route on its first request (seconds, and no one's wait).
  if (process.env.NODE_ENV === "production") warmup.startRequestWarmup();
}
