/**
 * The one check of a browser session, used by every way into the server: the page proxy
 * (HTML, RSC payloads, prefetches, server actions), server components, server actions and
 * API routes. A session is valid only when
 *   1. the Auth.js session cookie decrypts with this server's secret (a forged or tampered
 *      cookie does not) and its `exp` has not passed (checked by the decoder), and
 *   2. the user it names still exists with the same id, and the session generation stamped
 *      into the token at sign-in equals the user's current one. Removing a user, changing
 *      their password or role, or revoking their tokens bumps the generation
 *      (lib/server/auth/users.ts), which ends every session they hold.
 * The user row is cached for SESSION_CACHE_MS so a page with many requests does one lookup.
 */
import { decode } from "next-auth/jwt";
import { serverEnv } from "@/lib/env";
import { getDb, type Db } from "@/lib/server/db";
import { loadOrCreateSecret } from "@/lib/server/auth/secret";
import { sessionRowById, type Role, type SessionRow } from "@/lib/server/auth/users";

/** Auth.js cookie names: `__Secure-` when cookies are marked Secure (HTTPS). */
export const SESSION_COOKIE_NAMES = ["__Secure-authjs.session-token", "authjs.session-token"] as const;
export const SESSION_CACHE_MS = 2_000;

export interface SessionUser {
  id: number;
  name: string;
  role: Role;
}

/** The claims rlboard stamps into a session token at sign-in (nextauth.ts jwt callback). */
export interface SessionClaims {
  uid: number;
  gen: number;
  name: string;
}

/** Cookie header → {name: value}. Malformed pairs are ignored. */
export function parseCookieHeader(header: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      /* keep the raw value; it will fail to decrypt */
    }
    if (name && !out.has(name)) out.set(name, value);
  }
  return out;
}

/** The session cookie's value under `name`, joining Auth.js' chunks (`name.0`, `name.1`…). */
function cookieValue(cookies: Map<string, string>, name: string): string | null {
  const whole = cookies.get(name);
  if (whole) return whole;
  const chunks: string[] = [];
  for (let i = 0; cookies.has(`${name}.${i}`); i++) chunks.push(cookies.get(`${name}.${i}`)!);
  return chunks.length ? chunks.join("") : null;
}

export function hasSessionCookie(cookieHeader: string | null | undefined): boolean {
  return /(?:^|;\s*)(?:__Secure-)?authjs\.session-token(?:\.\d+)?=/.test(cookieHeader ?? "");
}

export function sessionSecret(): string {
  const env = serverEnv();
  return loadOrCreateSecret(env.dataDir, env.authSecret);
}

/** Decrypt and check the token's claims; null for anything forged, expired or foreign. */
export async function decodeSessionClaims(cookieHeader: string | null | undefined, secret = sessionSecret()): Promise<SessionClaims | null> {
  const cookies = parseCookieHeader(cookieHeader);
  for (const name of SESSION_COOKIE_NAMES) {
    const token = cookieValue(cookies, name);
    if (!token || token.length > 16_384) continue;
    let payload: Record<string, unknown> | null = null;
    try {
      payload = await decode<Record<string, unknown>>({ token, secret, salt: name });
    } catch {
      payload = null;
    }
    if (!payload) continue;
    const { uid, gen, name: user } = payload;
    if (typeof uid !== "number" || !Number.isSafeInteger(uid) || typeof gen !== "number" || typeof user !== "string") continue;
    return { uid, gen, name: user };
  }
  return null;
}

const cache = new Map<number, { row: SessionRow | null; at: number }>();

function cachedRow(db: Db, uid: number, nowMs: number): SessionRow | null {
  const hit = cache.get(uid);
  if (hit && nowMs - hit.at < SESSION_CACHE_MS) return hit.row;
  const row = sessionRowById(db, uid);
  if (cache.size > 10_000) cache.clear();
  cache.set(uid, { row, at: nowMs });
  return row;
}

/** Forget cached rows (tests, and the admin actions of this process after a change). */
export function forgetSessionCache(): void {
  cache.clear();
}

const matches = (row: SessionRow | null, c: SessionClaims): row is SessionRow =>
  row !== null && row.name === c.name && row.session_gen === c.gen;

/**
 * Claims → the live user, or null when the user is gone or the session was ended. A cached
 * row that disagrees with the claims is read again at once, so only revocations wait for
 * the cache (≤ SESSION_CACHE_MS); a session that just became valid (a fresh sign-in) never does.
 */
export function userForClaims(db: Db, claims: SessionClaims, nowMs = Date.now()): SessionUser | null {
  let row = cachedRow(db, claims.uid, nowMs);
  if (!matches(row, claims)) {
    row = sessionRowById(db, claims.uid);
    cache.set(claims.uid, { row, at: nowMs });
  }
  return matches(row, claims) ? { id: row.id, name: row.name, role: row.role } : null;
}

/** The signed-in user behind a Cookie header, or null. */
export async function sessionUserFromCookies(cookieHeader: string | null | undefined): Promise<SessionUser | null> {
  if (!hasSessionCookie(cookieHeader)) return null;
  const claims = await decodeSessionClaims(cookieHeader);
  return claims ? userForClaims(getDb(), claims) : null;
}
