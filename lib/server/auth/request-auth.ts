/**
 * Who is calling an API route: a Bearer API token (scripts, parity tool) or the signed-in
 * browser session. Tokens are checked first so scripts never depend on cookies.
 */
import { getDb } from "@/lib/server/db";
import { userForToken, type Role } from "@/lib/server/auth/users";

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
  // No session cookie: anonymous, without loading next-auth (which needs Next's request
  // scope that scripts and tests never have).
  const cookies = req.headers.get("cookie") ?? "";
  if (!/(?:^|;\s*)(?:__Secure-)?authjs\.session-token(?:\.\d+)?=/.test(cookies)) return null;
  const { auth } = await import("@/lib/server/auth/nextauth");
  const session = await auth();
  const name = session?.user?.name;
  if (!name) return null;
  return { name, role: session.user?.role ?? "member", via: "session" };
}
