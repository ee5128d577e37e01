/**
 * The session check every way in goes through (session-token.ts). Tokens are made with
 * Auth.js' own encoder, exactly as its sign-in writes them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encode } from "next-auth/jwt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setServerEnvForTests } from "@/lib/env";
import { getDb } from "@/lib/server/db";
import { authenticateRequest } from "@/lib/server/auth/request-auth";
import {
  decodeSessionClaims,
  forgetSessionCache,
  sessionSecret,
  sessionUserFromCookies,
  SESSION_CACHE_MS,
  userForClaims,
} from "@/lib/server/auth/session-token";
import { addUser, findUser, removeUser, revokeTokens, setPassword, setRole } from "@/lib/server/auth/users";

const COOKIE = "authjs.session-token";

async function cookieFor(name: string, opts: { maxAge?: number; secret?: string; salt?: string; claims?: Record<string, unknown> } = {}): Promise<string> {
  const row = findUser(getDb(), name);
  const token = await encode({
    token: { name, uid: row?.id, gen: row?.session_gen, ...opts.claims },
    secret: opts.secret ?? sessionSecret(),
    salt: opts.salt ?? COOKIE,
    maxAge: opts.maxAge ?? 3600,
  });
  return `${opts.salt ?? COOKIE}=${token}`;
}

beforeEach(async () => {
  setServerEnvForTests({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-session-")) });
  forgetSessionCache();
  await addUser(getDb(), "eve", "eve-password-1", "member");
  await addUser(getDb(), "root", "root-password-1", "admin");
});
afterEach(() => forgetSessionCache());

describe("session cookies", () => {
  it("accepts a token this server issued, for a user who still exists", async () => {
    const user = await sessionUserFromCookies(await cookieFor("eve"));
    expect(user).toMatchObject({ name: "eve", role: "member" });
  });

  it("refuses a forged cookie (any value that is not a token of this server)", async () => {
    for (const forged of [`${COOKIE}=x`, `${COOKIE}=`, `__Secure-${COOKIE}=abc.def.ghi.jkl.mno`, `${COOKIE}.0=x; ${COOKIE}.1=y`]) {
      expect(await sessionUserFromCookies(forged), forged).toBeNull();
    }
    // Signed with another secret: a token from another rlboard, or a guessed secret.
    expect(await sessionUserFromCookies(await cookieFor("eve", { secret: "another-server-secret-0123456789" }))).toBeNull();
    // The right secret but the other cookie's salt.
    expect(await sessionUserFromCookies(`${COOKIE}=${(await cookieFor("eve", { salt: `__Secure-${COOKIE}` })).split("=")[1]}`)).toBeNull();
  });

  it("refuses an expired token", async () => {
    expect(await sessionUserFromCookies(await cookieFor("eve", { maxAge: -60 }))).toBeNull();
  });

  it("refuses a token without rlboard's claims (an older or hand-made token)", async () => {
    expect(await sessionUserFromCookies(await cookieFor("eve", { claims: { uid: undefined } }))).toBeNull();
    expect(await sessionUserFromCookies(await cookieFor("eve", { claims: { gen: "0" } }))).toBeNull();
  });

  it("joins chunked cookies like Auth.js writes them", async () => {
    const whole = (await cookieFor("eve")).split("=")[1]!;
    const half = Math.floor(whole.length / 2);
    const chunked = `${COOKIE}.0=${whole.slice(0, half)}; ${COOKIE}.1=${whole.slice(half)}`;
    expect((await sessionUserFromCookies(chunked))?.name).toBe("eve");
  });
});

describe("sessions end with their user", () => {
  const cases: [string, () => Promise<void> | void][] = [
    ["removed", () => removeUser(getDb(), "eve")],
    ["password changed", () => setPassword(getDb(), "eve", "a-new-password")],
    ["demoted/promoted", () => setRole(getDb(), "eve", "admin")],
    ["tokens revoked", () => void revokeTokens(getDb(), "eve")],
  ];
  for (const [what, change] of cases) {
    it(`a session ends when its user is ${what}`, async () => {
      const cookie = await cookieFor("eve");
      expect((await sessionUserFromCookies(cookie))?.name).toBe("eve");
      await change();
      forgetSessionCache();
      expect(await sessionUserFromCookies(cookie)).toBeNull();
      // A fresh sign-in after the change works again (unless the user is gone).
      if (what !== "removed") expect((await sessionUserFromCookies(await cookieFor("eve")))?.name).toBe("eve");
    });
  }

  it("a re-created user of the same name does not inherit the old sessions", async () => {
    const cookie = await cookieFor("eve");
    removeUser(getDb(), "eve");
    await addUser(getDb(), "eve", "eve-password-2", "member");
    forgetSessionCache();
    expect(await sessionUserFromCookies(cookie)).toBeNull();
  });

  it("a re-created user who gets the removed user's id (SQLite reuses the highest rowid) does not inherit its sessions", async () => {
    await addUser(getDb(), "last", "last-password-1", "member");
    const oldId = findUser(getDb(), "last")!.id;
    const cookie = await cookieFor("last");
    expect((await sessionUserFromCookies(cookie))?.name).toBe("last");
    removeUser(getDb(), "last");
    await addUser(getDb(), "last", "last-password-2", "member");
    expect(findUser(getDb(), "last")!.id).toBe(oldId);
    forgetSessionCache();
    expect(await sessionUserFromCookies(cookie)).toBeNull();
  });

  it("a fresh sign-in is valid at once, even while a stale row of that id is cached", async () => {
    await addUser(getDb(), "tmp", "tmp-password-1", "member");
    const stale = await cookieFor("tmp");
    expect((await sessionUserFromCookies(stale))?.name).toBe("tmp"); // row cached now
    await setPassword(getDb(), "tmp", "tmp-password-2"); // ends the session, generation bumped
    const fresh = await cookieFor("tmp");
    expect((await sessionUserFromCookies(fresh))?.name).toBe("tmp");
    expect(await sessionUserFromCookies(stale)).toBeNull();
  });

  it("the per-user cache holds a row for at most SESSION_CACHE_MS", async () => {
    const claims = (await decodeSessionClaims(await cookieFor("eve")))!;
    const t0 = Date.now();
    expect(userForClaims(getDb(), claims, t0)?.name).toBe("eve");
    removeUser(getDb(), "eve");
    expect(userForClaims(getDb(), claims, t0 + SESSION_CACHE_MS + 1)).toBeNull();
    expect(SESSION_CACHE_MS).toBeLessThanOrEqual(5000);
  });

  it("API requests with a session cookie use the same check", async () => {
    const cookie = await cookieFor("eve");
    const req = (c: string) => new Request("http://127.0.0.1/api/runs", { headers: { cookie: c } });
    expect(await authenticateRequest(req(cookie))).toMatchObject({ name: "eve", via: "session" });
    expect(await authenticateRequest(req(`${COOKIE}=x`))).toBeNull();
    removeUser(getDb(), "eve");
    forgetSessionCache();
    expect(await authenticateRequest(req(cookie))).toBeNull();
  });
});
