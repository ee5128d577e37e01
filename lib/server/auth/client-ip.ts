/**
 * The client address behind the login lockout (lockout.ts), or null when it cannot be
 * known. Forwarded headers are believed only with `--trust-proxy` (RLBOARD_TRUST_PROXY):
 *
 *  - without it, X-Forwarded-For and X-Real-IP are ignored entirely. Next's server fills
 *    x-forwarded-for from the socket only when the client did not send one, so without a
 *    proxy that sets it the header is whatever the client wrote — rotating it would give a
 *    fresh lockout key per guess. The lockout then keys on the user name alone.
 *  - with it, exactly one proxy hop is trusted: the RIGHTMOST X-Forwarded-For entry is the
 *    address the proxy appended (nginx `$proxy_add_x_forwarded_for`); anything to its left
 *    came from the client and is ignored. X-Real-IP is the fallback when there is no
 *    X-Forwarded-For. docs/deploy.md "Behind a reverse proxy".
 */
import { serverEnv } from "@/lib/env";

const MAX_LEN = 64;

function clean(v: string | undefined): string | null {
  const s = v?.trim().slice(0, MAX_LEN);
  return s ? s : null;
}

export function clientIp(headers: Headers, trustProxy = serverEnv().trustProxy): string | null {
  if (!trustProxy) return null;
  const xff = headers.get("x-forwarded-for");
  if (xff) return clean(xff.split(",").at(-1));
  return clean(headers.get("x-real-ip") ?? undefined);
}
