/**
 * Next's once-per-server-process hook: starts the alert loop when `serve --alert-webhook`
 * named webhooks (docs/api.md 9.5.5). Node runtime only; nothing else starts here.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { ensureAlertLoop } = await import("@/lib/server/alerts");
    ensureAlertLoop();
  }
}
