/**
 * The login lockout against the real Auth.js credentials flow (rlboard's route handlers,
 * real SQLite): forwarded headers count only with --trust-proxy, a locked name refuses
 * even the right password, and a burst of parallel guesses gets no more than
 * MAX_FAILURES of them checked.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { GET, POST } from "@/app/api/auth/[...nextauth]/route";
import { setServerEnvForTests, type ServerEnvironment } from "@/lib/env";
import { getDb } from "@/lib/server/db";
import { addUser } from "@/lib/server/auth/users";
import { clientIp } from "@/lib/server/auth/client-ip";
import { beginAttempt, clearUserFailures, LOCK_SECONDS, lockKey, lockedFor, MAX_FAILURES } from "@/lib/server/auth/lockout";
import { forgetSessionCache, sessionUserFromCookies } from "@/lib/server/auth/session-token";
import { ProxiedBrowser } from "@/lib/testing/auth-browser";

const PASSWORD = "right-password-42";
const BIND = "127.0.0.1:7788";

async function serve(env: Partial<ServerEnvironment> = {}): Promise<void> {
  setServerEnvForTests({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-lockout-")), ...env });
  forgetSessionCache();
  await addUser(getDb(), "alice", PASSWORD, "member");
}

type Outcome = "ok" | "wrong" | "locked";

/** One sign-in as the login form's server action does it: csrf, then the credentials callback. */
async function login(password: string, forwarded: Record<string, string> = {}): Promise<{ outcome: Outcome; browser: ProxiedBrowser }> {
  const browser = new ProxiedBrowser({ bind: BIND, host: BIND, forwarded });
  const csrf = browser.absorb(await GET(browser.request("/api/auth/csrf")));
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = browser.absorb(
    await POST(browser.request("/api/auth/callback/credentials", { form: { csrfToken, name: "alice", password, callbackUrl: "/" } })),
  );
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  if (location.pathname !== "/login") return { outcome: "ok", browser };
  expect(location.searchParams.get("error")).toBe("CredentialsSignin");
  return { outcome: location.searchParams.get("code") === "locked" ? "locked" : "wrong", browser };
}

// Auth.js logs every refused sign-in on console.error; keep the test output readable.
const quiet = vi.spyOn(console, "error");
beforeAll(() => {
  quiet.mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).includes("CredentialsSignin")) process.stderr.write(`${args.map(String).join(" ")}\n`);
  });
});
afterAll(() => quiet.mockRestore());

const xff = (i: number) => ({ "x-forwarded-for": `198.51.100.${i}` });

describe("client address", () => {
  it("ignores X-Forwarded-For and X-Real-IP unless a proxy is trusted; then takes the hop the proxy appended", () => {
    const h = new Headers({ "x-forwarded-for": "6.6.6.6, 10.0.0.9", "x-real-ip": "7.7.7.7" });
    expect(clientIp(h, false)).toBeNull();
    expect(clientIp(h, true)).toBe("10.0.0.9");
    expect(clientIp(new Headers({ "x-real-ip": "10.0.0.3" }), true)).toBe("10.0.0.3");
    expect(clientIp(new Headers(), true)).toBeNull();
  });
});

describe("lockout through the credentials sign-in", () => {
  beforeEach(() => serve());

  it("signs in with the right password (the flow under test works)", async () => {
    const { outcome, browser } = await login(PASSWORD);
    expect(outcome).toBe("ok");
    expect((await sessionUserFromCookies(browser.cookieHeader()))?.name).toBe("alice");
  });

  it("without --trust-proxy, a new X-Forwarded-For per guess does not give more guesses", async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < MAX_FAILURES + 3; i++) outcomes.push((await login(`guess-${i}`, xff(i))).outcome);
    expect(outcomes).toEqual([...Array<Outcome>(MAX_FAILURES - 1).fill("wrong"), ...Array<Outcome>(4).fill("locked")]);
    // The lock is on the name, not on any address the client claimed.
    expect(lockedFor(getDb(), lockKey("alice", null))).toBeGreaterThan(LOCK_SECONDS - 5);
    expect((await login(PASSWORD, xff(99))).outcome).toBe("locked");
  });

  it("refuses the right password while locked, and accepts it once the lock is cleared", async () => {
    for (let i = 0; i < MAX_FAILURES; i++) await login(`guess-${i}`);
    expect((await login(PASSWORD)).outcome).toBe("locked");
    clearUserFailures(getDb(), "Alice");
    expect((await login(PASSWORD)).outcome).toBe("ok");
  });

  it("checks at most MAX_FAILURES passwords of a parallel burst", async () => {
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => login(`burst-${i}`, xff(i))));
    const counts = { wrong: 0, locked: 0, ok: 0 };
    for (const b of burst) counts[b.outcome]++;
    // MAX_FAILURES checked (the last of them reports the lock), the rest refused unchecked.
    expect(counts).toEqual({ wrong: MAX_FAILURES - 1, locked: 20 - (MAX_FAILURES - 1), ok: 0 });
    // Each checked password left one failure: 5, not 20 (checking first and counting after
    // the asynchronous hash would let the whole burst through).
    const row = getDb().prepare("SELECT failures FROM login_failures WHERE key = ?").get(lockKey("alice", null)) as { failures: number };
    expect(row.failures).toBe(MAX_FAILURES);
    expect((await login(PASSWORD)).outcome).toBe("locked");
  });
});

describe("lockout behind a trusted proxy (--trust-proxy)", () => {
  beforeEach(() => serve({ trustProxy: true }));

  it("keys on the rightmost X-Forwarded-For hop: a client-sent left part changes nothing", async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < MAX_FAILURES + 1; i++) {
      outcomes.push((await login(`guess-${i}`, { "x-forwarded-for": `203.0.113.${i}, 10.0.0.9` })).outcome);
    }
    expect(outcomes.slice(-2)).toEqual(["locked", "locked"]);
    expect(lockedFor(getDb(), lockKey("alice", "10.0.0.9"))).toBeGreaterThan(0);
    // Another client address (another hop appended by the proxy) is not locked out.
    expect((await login(PASSWORD, { "x-forwarded-for": "10.0.0.10" })).outcome).toBe("ok");
    expect((await login(PASSWORD, { "x-forwarded-for": "1.2.3.4, 10.0.0.9" })).outcome).toBe("locked");
  });
});

describe("beginAttempt", () => {
  beforeEach(() => serve());

  it("takes a slot per attempt and refuses once the slots are used", () => {
    const key = lockKey("bob", null);
    const t0 = 2_000_000;
    const seen = Array.from({ length: MAX_FAILURES + 1 }, (_, i) => beginAttempt(getDb(), key, t0 + i));
    expect(seen.slice(0, MAX_FAILURES).every((a) => a.allowed)).toBe(true);
    expect(seen[MAX_FAILURES - 1]).toEqual({ allowed: true, last: true });
    expect(seen[MAX_FAILURES]).toMatchObject({ allowed: false });
    expect(beginAttempt(getDb(), key, t0 + MAX_FAILURES + LOCK_SECONDS)).toEqual({ allowed: true, last: false });
  });
});
