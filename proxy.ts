/**
 * Page gate: a browser without a session cookie is sent to /login?next=<where it was
 * going>, so deep links survive the login. This only checks that a cookie exists — the
 * signed session itself is verified by the (dashboard) layout on every render, and API
 * routes authenticate in withApi (401 JSON, never a redirect).
 */
import { NextResponse, type NextRequest } from "next/server";

const SESSION_COOKIES = ["authjs.session-token", "__Secure-authjs.session-token"];

export function proxy(req: NextRequest) {
  const hasSession = SESSION_COOKIES.some((name) => req.cookies.has(name));
  if (hasSession) return NextResponse.next();
  const login = new URL("/login", req.nextUrl);
  const next = req.nextUrl.pathname + req.nextUrl.search;
  if (next !== "/") login.searchParams.set("next", next);
  return NextResponse.redirect(login);
}

export const config = {
  matcher: ["/((?!api/|_next/|login|favicon\\.ico|icon\\.svg|robots\\.txt).*)"],
};
