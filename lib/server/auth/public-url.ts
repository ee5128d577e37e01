/**
 * Where users reach this server, as one answer for every part that needs it (Auth.js
 * callback URLs, the server-action origin check, Secure cookies):
 *   1. `--public-url` / AUTH_URL when set;
 *   2. else, with `--trust-proxy`, the proxy's X-Forwarded-Proto / X-Forwarded-Host;
 *   3. else the request's own Host header (plain http).
 * Forwarded headers are ignored unless the operator said a proxy sets them: a client can
 * send any header it likes.
 */
import { serverEnv } from "@/lib/env";

function firstValue(v: string | null): string | null {
  const first = v?.split(",")[0]?.trim();
  return first ? first : null;
}

export function publicOrigin(headers: Headers): string {
  const env = serverEnv();
  if (env.publicUrl) return new URL(env.publicUrl).origin;
  if (env.trustProxy) {
    const host = firstValue(headers.get("x-forwarded-host")) ?? headers.get("host");
    const proto = firstValue(headers.get("x-forwarded-proto")) === "https" ? "https" : "http";
    if (host) return `${proto}://${host}`;
  }
  return `http://${headers.get("host") ?? "localhost"}`;
}

/** True when the browser reaches us over HTTPS (so session cookies must be Secure). */
export function isSecureRequest(headers: Headers): boolean {
  const env = serverEnv();
  if (env.secureCookies) return true;
  return publicOrigin(headers).startsWith("https://");
}

/**
 * Same-origin check for state-changing browser requests (server actions): the Origin
 * header's host must be the public host. A request without Origin is not a browser's
 * cross-site POST (browsers always send Origin on cross-origin POSTs).
 */
export function isCrossOrigin(headers: Headers): boolean {
  const origin = headers.get("origin");
  if (!origin) return false;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return true;
  }
  const expected = new URL(publicOrigin(headers)).host;
  // Without a configured public URL the Host header decides (behind a proxy without
  // --trust-proxy, the proxy must pass Host through — docs/deploy.md).
  return host.toLowerCase() !== expected.toLowerCase();
}
