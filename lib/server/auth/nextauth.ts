import "server-only";
/**
 * Auth.js (next-auth v5) wiring: credentials against the users table (JWT sessions, as
 * credentials require), the login lockout (lockout.ts), and optional OIDC / GitHub from
 * env. The config is built lazily per request so the secret and providers come from the
 * running server's data dir and env, not from build time, and so Secure cookies can
 * follow the request.
 *
 * Every URL Auth.js builds comes from public-url.ts. Auth.js takes its base URL from the
 * request URL in the route handlers, but from X-Forwarded-Host/-Proto in the sign-in
 * server actions (createActionURL), and from AUTH_URL in both when that is set. Next
 * hands route handlers `<x-forwarded-proto>://localhost:<port>` (the bind address, not
 * the Host), so behind a proxy without AUTH_URL the OIDC authorize step (a server action:
 * the public host) and the token exchange (the callback route: https://localhost:PORT)
 * sent different redirect_uris and the issuer refused the code. Now the route handlers
 * get their request URL rewritten to `publicOrigin()`, and the server actions run only
 * when the URL Auth.js derives from the headers is that same origin (trustHost).
 */
import NextAuth, { CredentialsSignin, type NextAuthConfig } from "next-auth";
import { headers as requestHeaders } from "next/headers";
import type { NextRequest } from "next/server";
import Credentials from "next-auth/providers/credentials";
import GitHub from "next-auth/providers/github";
import { z } from "zod";
import { serverEnv } from "@/lib/env";
import { getDb } from "@/lib/server/db";
import { loadOrCreateSecret } from "@/lib/server/auth/secret";
import { checkPassword, findUser, upsertExternalUser, type Role } from "@/lib/server/auth/users";
import { userForClaims } from "@/lib/server/auth/session-token";
import { beginAttempt, clearFailures, lockKey } from "@/lib/server/auth/lockout";
import { clientIp } from "@/lib/server/auth/client-ip";
import { isSecureRequest, publicOrigin, validHost } from "@/lib/server/auth/public-url";
import { PASSWORD_MAX } from "@/lib/server/auth/passwords";

class LockedOut extends CredentialsSignin {
  override code = "locked";
}

const LoginInput = z.object({ name: z.string().min(1).max(64), password: z.string().min(1).max(PASSWORD_MAX) });

declare module "next-auth" {
  interface Session {
    user: { name: string; role: Role };
  }
  interface User {
    role?: Role;
    /** The user's session generation at sign-in (see session-token.ts). */
    gen?: number;
  }
}

/**
 * The origin Auth.js' server-action helpers (signIn/signOut) will use: AUTH_URL, else
 * X-Forwarded-Host (Next fills it from Host when the client sent none) and
 * X-Forwarded-Proto (likewise filled, from the socket).
 */
function authJsActionOrigin(headers: Headers): string | null {
  const env = serverEnv();
  if (env.publicUrl) return new URL(env.publicUrl).origin;
  const host = validHost(headers.get("x-forwarded-host") ?? headers.get("host"));
  const proto = headers.get("x-forwarded-proto") ?? "https";
  return host && (proto === "http" || proto === "https") ? `${proto}://${host}` : null;
}

/**
 * Whether Auth.js may run a sign-in server action for these headers (its trustHost): only
 * when the origin it will derive is the one public-url.ts answers.
 */
export function serverActionOriginTrusted(headers: Headers): boolean {
  return authJsActionOrigin(headers) === publicOrigin(headers);
}

/** The request headers of a server action / server component; null outside a request. */
async function currentHeaders(): Promise<Headers | null> {
  try {
    return new Headers(await requestHeaders());
  } catch {
    return null;
  }
}

/**
 * `request`: the route handler's request (its URL already rewritten to the public
 * origin); null for the server-action helpers, which read the headers themselves.
 */
async function buildConfig(request: Request | null): Promise<NextAuthConfig> {
  const env = serverEnv();
  const headers = request?.headers ?? (await currentHeaders());
  // Auth.js' trustHost means "believe the request URL". Route handlers always get a URL
  // public-url.ts chose; a server action only when Auth.js' own reading of the headers
  // agrees with it — a client-sent X-Forwarded-Host, or a TLS proxy in front without
  // --trust-proxy / --public-url, is refused (UntrustedHost) instead of being used.
  const trustHost = request !== null || (headers !== null && serverActionOriginTrusted(headers));
  const useSecureCookies = headers ? isSecureRequest(headers) : env.secureCookies || (env.publicUrl?.startsWith("https://") ?? false);
  const providers: NextAuthConfig["providers"] = [
    Credentials({
      id: "credentials",
      name: "Password",
      credentials: { name: { label: "User" }, password: { label: "Password", type: "password" } },
      async authorize(raw, request) {
        const parsed = LoginInput.safeParse(raw);
        if (!parsed.success) return null;
        const { name, password } = parsed.data;
        const db = getDb();
        const key = lockKey(name, clientIp(request.headers));
        // The slot is taken before the (asynchronous) password check, so a locked key
        // refuses even the right password and parallel guesses cannot outrun the count.
        const attempt = beginAttempt(db, key);
        if (!attempt.allowed) throw new LockedOut();
        const user = await checkPassword(db, name, password);
        if (!user) {
          if (attempt.last) throw new LockedOut();
          return null;
        }
        clearFailures(db, key);
        return { id: String(user.id), name: user.name, role: user.role, gen: user.session_gen };
      },
    }),
  ];
  if (env.oidc) {
    providers.push({
      id: "oidc",
      name: env.oidc.name,
      type: "oidc",
      issuer: env.oidc.issuer,
      clientId: env.oidc.clientId,
      clientSecret: env.oidc.clientSecret,
    });
  }
  if (env.github) providers.push(GitHub({ clientId: env.github.clientId, clientSecret: env.github.clientSecret }));

  return {
    secret: loadOrCreateSecret(env.dataDir, env.authSecret),
    trustHost,
    // Stated, so a public URL with a path cannot move Auth.js' routes away from app/api/auth.
    basePath: "/api/auth",
    session: { strategy: "jwt", maxAge: 7 * 24 * 3600 },
    pages: { signIn: "/login", error: "/login" },
    useSecureCookies,
    providers,
    callbacks: {
      jwt({ token, user, account }) {
        if (user) {
          let name = user.name ?? user.email ?? "user";
          if (account && account.provider !== "credentials") {
            // External identities map onto a local user row so roles and audit work the same.
            name = upsertExternalUser(getDb(), name.replace(/[^A-Za-z0-9._@-]/g, "_").slice(0, 64), account.provider, env.oidcDefaultRole).name;
          }
          // The claims every request checks (session-token.ts): who, and which generation.
          const row = findUser(getDb(), name);
          if (!row) throw new Error("signed-in user has no row");
          token.name = row.name;
          token.uid = row.id;
          token.gen = row.session_gen;
          delete token.role;
        }
        return token;
      },
      session({ session, token }) {
        // Only Auth.js' own endpoints (/api/auth/session) come here; every page and API
        // route checks the session with session-token.ts instead.
        const claims = typeof token.uid === "number" && typeof token.gen === "number" && typeof token.name === "string"
          ? { uid: token.uid, gen: token.gen, name: token.name }
          : null;
        const live = claims ? userForClaims(getDb(), claims) : null;
        session.user = { ...session.user, name: live?.name ?? "", role: live?.role ?? "member" };
        if (!live) session.expires = new Date(0).toISOString() as typeof session.expires;
        return session;
      },
    },
  };
}

const nextAuth = NextAuth((request) => buildConfig(request ?? null));
export const { auth, signIn, signOut } = nextAuth;

/**
 * The route handler's request at the public origin (same method, path, query, headers and
 * body). A plain Request, not a NextRequest: NextRequest's URL turns 127.0.0.1 and [::1]
 * into "localhost", and an OIDC callback at http://localhost:7788 is not the
 * http://127.0.0.1:7788 the authorize step named (nor the host the cookies belong to).
 * `nextUrl` is there for next-auth's AUTH_URL rewrite (next-auth/lib/env.js reqWithEnvURL),
 * which names the same origin.
 */
function atPublicOrigin(req: NextRequest): NextRequest {
  const { pathname, search } = new URL(req.url);
  const target = new URL(`${publicOrigin(req.headers)}${pathname}${search}`);
  const init: RequestInit & { duplex?: "half" } = { method: req.method, headers: req.headers, signal: req.signal };
  if (req.body) {
    init.body = req.body;
    init.duplex = "half";
  }
  return Object.assign(new Request(target, init), { nextUrl: target }) as unknown as NextRequest;
}

/** app/api/auth/[...nextauth]/route.ts */
export const handlers = {
  GET: (req: NextRequest) => nextAuth.handlers.GET(atPublicOrigin(req)),
  POST: (req: NextRequest) => nextAuth.handlers.POST(atPublicOrigin(req)),
};

export function configuredProviders(): { id: string; name: string }[] {
  const env = serverEnv();
  const out: { id: string; name: string }[] = [];
  if (env.oidc) out.push({ id: "oidc", name: env.oidc.name });
  if (env.github) out.push({ id: "github", name: "GitHub" });
  return out;
}
