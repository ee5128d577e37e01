import "server-only";
/**
 * Auth.js (next-auth v5) wiring: credentials against the users table (JWT sessions, as
 * credentials require), lockout per user+IP, and optional OIDC / GitHub from env. The
 * config is built lazily per request so the secret and providers come from the running
 * server's data dir and env, not from build time.
 */
import NextAuth, { CredentialsSignin, type NextAuthConfig } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import GitHub from "next-auth/providers/github";
import { z } from "zod";
import { serverEnv } from "@/lib/env";
import { getDb } from "@/lib/server/db";
import { loadOrCreateSecret } from "@/lib/server/auth/secret";
import { checkPassword, findUser, upsertExternalUser, type Role } from "@/lib/server/auth/users";
import { userForClaims } from "@/lib/server/auth/session-token";
import { clearFailures, lockKey, lockedFor, recordFailure } from "@/lib/server/auth/lockout";
import { clientIp } from "@/lib/server/auth/client-ip";
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

function buildConfig(): NextAuthConfig {
  const env = serverEnv();
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
        if (lockedFor(db, key) > 0) throw new LockedOut();
        const user = await checkPassword(db, name, password);
        if (!user) {
          if (recordFailure(db, key).lockedFor > 0) throw new LockedOut();
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
    trustHost: true,
    session: { strategy: "jwt", maxAge: 7 * 24 * 3600 },
    pages: { signIn: "/login", error: "/login" },
    useSecureCookies: env.secureCookies,
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

export const { handlers, auth, signIn, signOut } = NextAuth(() => buildConfig());

export function configuredProviders(): { id: string; name: string }[] {
  const env = serverEnv();
  const out: { id: string; name: string }[] = [];
  if (env.oidc) out.push({ id: "oidc", name: env.oidc.name });
  if (env.github) out.push({ id: "github", name: "GitHub" });
  return out;
}
