/**
 * Who is calling an API route: a Bearer API token (scripts, parity tool) or the signed-in
 * browser session (checked by session-token.ts: signature, expiry, user, generation).
 * Tokens are checked first so scripts never depend on cookies.
 */
import { getDb } from "@/lib/server/db";
import { userForToken, type Role } from "@/lib/server/auth/users";
import { sessionUserFromCookies } from "@/lib/server/auth/session-token";

export interface AuthUser {
  name: string;
  role: Role;
  via: "token" | "session";
}

export async function authenticateRequest(req: Request): Promise<AuthUser | null> {
  const header = req.headers.get("authorization");
  if (header) {
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) return null;
    const user = userForToken(getDb(), m[1]!);
    return user ? { name: user.name, role: user.role, via: "token" } : null;
  }
  const user = await sessionUserFromCookies(req.headers.get("cookie"));
  return user ? { name: user.name, role: user.role, via: "session" } : null;
}
