/**
 * Where users reach this server, as one answer for every part that needs it (Auth.js
 * URLs — the OIDC redirect_uri of both the authorize step and the token exchange, the
 * redirect home after sign-in —, the server-action origin check, Secure cookies):
 *   1. `--public-url` / AUTH_URL when set;
 *   2. else, with `--trust-proxy`, the proxy's X-Forwarded-Proto / X-Forwarded-Host (the
 *      Host header when the proxy sends no X-Forwarded-Host);
 *   3. else the request's own Host header, over http — or https when the operator said
 *      users come over TLS (RLBOARD_SECURE_COOKIES=1, the older way to run behind a proxy).
 * Forwarded headers are ignored unless the operator said a proxy sets them: a client can
 * send any header it likes. One proxy hop is trusted: when a forwarded header holds a
 * list, its last value is the one that proxy wrote. docs/deploy.md "Behind a reverse proxy".
 */
import { serverEnv } from "@/lib/env";

const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** A Host-header value fit for a URL (no path, user info or spaces), or null. */
export function validHost(v: string | null | undefined): string | null {
  const h = v?.trim();
  return h && h.length <= 255 && HOST.test(h) ? h.toLowerCase() : null;
}

function lastValue(v: string | null): string | null {
  const last = v?.split(",").at(-1)?.trim();
  return last ? last : null;
}

export function publicOrigin(headers: Headers): string {
  const env = serverEnv();
  if (env.publicUrl) return new URL(env.publicUrl).origin;
  const host = validHost(headers.get("host"));
  if (env.trustProxy) {
    const fwdHost = validHost(lastValue(headers.get("x-forwarded-host"))) ?? host;
    const proto = lastValue(headers.get("x-forwarded-proto"))?.toLowerCase() === "https" ? "https" : "http";
    if (fwdHost) return `${proto}://${fwdHost}`;
  }
  return `${env.secureCookies ? "https" : "http"}://${host ?? "localhost"}`;
}

/**
 * True when the browser reaches us over HTTPS, so session cookies must be Secure: an
 * https public URL, a trusted proxy reporting https, or RLBOARD_SECURE_COOKIES.
 */
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
  // Without a configured public URL or a trusted proxy the Host header decides: a proxy
  // in front must then pass Host through (docs/deploy.md).
  return host.toLowerCase() !== expected.toLowerCase();
}
