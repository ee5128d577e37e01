/**
 * The client address used for lockout keys. Behind a reverse proxy the first
 * X-Forwarded-For hop is the browser; without one, all local requests share "local".
 */
export function clientIp(headers: Headers): string {
  const xff = headers.get("x-forwarded-for");
  if (xff) return xff.split(",")[0]!.trim().slice(0, 64) || "local";
  return headers.get("x-real-ip")?.trim().slice(0, 64) || "local";
}
