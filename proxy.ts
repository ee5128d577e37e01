/**
 * Page gate, in front of every page request of any kind: HTML documents, RSC payloads
 * (`RSC: 1` / `?_rsc`), prefetches and server actions. It verifies the session the same
 * way API routes do (lib/server/auth/session-token.ts: signature, expiry, the user still
 * existing, their session generation) before Next renders anything, so no layout or page
 * runs for a request that is not signed in. Pages check again themselves
 * (lib/server/runs/page-run.ts), so a matcher mistake cannot open a page.
 *
 *  - no valid session: documents, RSC requests and prefetches get a redirect to
 *    /login?next=<where it was going> (deep links survive the login); server actions
 *    get 401 JSON. A stale or forged session cookie is cleared on the way.
 *  - a server action from another origin: 403 JSON (Next itself would answer 500).
 * Proxy runs on the Node.js runtime (Next 16), so it can read SQLite.
 *  - a path with malformed %-encoding: 400 JSON, for pages and API routes alike.
 * API routes (`/api/*`) authenticate in withApi (401 JSON, never a redirect), so the proxy
 * sees an API path only when it holds a `%` (the second matcher), for the check above:
 * Next's pass through the proxy cost every API request ~2 ms (warm `/api/health` 7.7 →
 * 5.4 ms without it, 2026-12-06; #20).
 */
import { NextResponse, type NextRequest } from "next/server";
import { hasSessionCookie, sessionUserFromCookies, SESSION_COOKIE_NAMES } from "@/lib/server/auth/session-token";
import { isCrossOrigin } from "@/lib/server/auth/public-url";
import { malformedPathResponse } from "@/lib/api/malformed-url";
import { storageFailureResponse } from "@/lib/api/errors";
import { storageFailureMessage } from "@/lib/contracts/errors";

/** A page for a person whose browser asked for a document while the server's storage is down. */
function storageFailurePage(message: string): Response {
  const text = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html><meta charset="utf-8"><title>rlboard: storage unavailable</title><h1>rlboard cannot use its storage</h1><p>${text}.</p><p>This page works again by itself once that is done: reload it.</p>`;
  return new Response(html, { status: 503, headers: { "content-type": "text/html; charset=utf-8", "retry-after": "30" } });
}

function jsonError(status: number, code: string, message: string): NextResponse {
  return NextResponse.json({ detail: message, error: { code, message } }, { status });
}

export async function proxy(req: NextRequest) {
  // A path whose %-escapes do not decode would fail inside Next's router (plain 500).
  const malformed = malformedPathResponse(req.nextUrl.pathname);
  if (malformed) return malformed;
  // API routes authenticate in withApi (401 JSON, never a redirect).
  if (req.nextUrl.pathname.startsWith("/api/")) return NextResponse.next();
  const isAction = req.method === "POST" && req.headers.has("next-action");
  if (isAction && isCrossOrigin(req.headers)) {
    return jsonError(403, "forbidden", "cross-origin request refused: open the dashboard at its own address");
  }
  // The login page is open to everyone (its sign-in action is origin-checked above).
  if (req.nextUrl.pathname === "/login") return NextResponse.next();
  const cookieHeader = req.headers.get("cookie");
  let user;
  try {
    user = await sessionUserFromCookies(cookieHeader);
  } catch (err) {
    // The server's own storage failed (its disk filled): say so instead of Next's bare 500.
    const down = storageFailureResponse(err);
    if (!down) throw err;
    return isAction || req.headers.has("rsc") ? down : storageFailurePage(storageFailureMessage(err) ?? "");
  }
  if (user) return NextResponse.next();

  const res = isAction
    ? jsonError(401, "unauthorized", "your session has ended: sign in again")
    : (() => {
        const login = new URL("/login", req.nextUrl);
        const next = req.nextUrl.pathname + req.nextUrl.search.replace(/([?&])_rsc=[^&]*&?/, "$1").replace(/[?&]$/, "");
        if (next !== "/") login.searchParams.set("next", next);
        return NextResponse.redirect(login);
      })();
  if (hasSessionCookie(cookieHeader)) {
    for (const c of req.cookies.getAll()) {
      if (SESSION_COOKIE_NAMES.some((n) => c.name === n || c.name.startsWith(`${n}.`))) res.cookies.delete(c.name);
    }
  }
  return res;
}

export const config = {
  // Pages: everything but API routes and static files. API routes: only a path with a `%`.
  matcher: ["/((?!api/|_next/static/|_next/image|favicon\\.ico$|icon\\.svg$|robots\\.txt$).*)", "/api/(.*%.*)"],
};
