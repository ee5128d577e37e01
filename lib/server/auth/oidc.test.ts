/**
 * OIDC sign-in behind a reverse proxy, end to end: rlboard's Auth.js route handlers
 * driven with real Requests shaped as Next hands them over (Host: the bind address, the
 * proxy's X-Forwarded-Host/Proto), against a real OIDC issuer on 127.0.0.1
 * (lib/testing/fake-oidc.ts). The redirect_uri of the authorize step and of the token
 * exchange must both be the public URL's (docs/deploy.md "Behind a reverse proxy").
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GET, POST } from "@/app/api/auth/[...nextauth]/route";
import { parseServerEnv, setServerEnvForTests, type ServerEnvironment } from "@/lib/env";
import { parsePublicUrl, serverEnvVars } from "@/cli/server-process";
import { getDb } from "@/lib/server/db";
import { findUser } from "@/lib/server/auth/users";
import { forgetSessionCache, sessionUserFromCookies } from "@/lib/server/auth/session-token";
import { serverActionOriginTrusted } from "@/lib/server/auth/nextauth";
import { startFakeOidc, type FakeOidc } from "@/lib/testing/fake-oidc";
import { ProxiedBrowser } from "@/lib/testing/auth-browser";

const PUBLIC = "https://dash.lab.test";
const BIND = "127.0.0.1:7788";
const PROXY = { "x-forwarded-host": "dash.lab.test", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7" };

let issuer: FakeOidc;
beforeAll(async () => {
  issuer = await startFakeOidc();
});
afterAll(async () => {
  await issuer.close();
});
beforeEach(() => {
  issuer.authorizeRequests.length = 0;
  issuer.tokenRequests.length = 0;
  forgetSessionCache();
});

function serve(env: Partial<ServerEnvironment>): void {
  setServerEnvForTests({
    dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-oidc-")),
    oidc: { issuer: issuer.issuer, clientId: issuer.clientId, clientSecret: issuer.clientSecret, name: "Lab SSO" },
    ...env,
  });
}

/** csrf → POST signin/oidc → the issuer's /authorize → the callback; every hop as a browser would. */
async function signInWithOidc(browser: ProxiedBrowser, callbackUrl = "/runs") {
  const csrf = browser.absorb(await GET(browser.request("/api/auth/csrf")));
  expect(csrf.status).toBe(200);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };

  const start = browser.absorb(await POST(browser.request("/api/auth/signin/oidc", { form: { csrfToken, callbackUrl } })));
  expect(start.status).toBe(302);
  const authorizeUrl = new URL(start.headers.get("location")!);
  expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${issuer.issuer}/authorize`);

  const atIssuer = await fetch(authorizeUrl, { redirect: "manual" });
  expect(atIssuer.status).toBe(302);
  const back = new URL(atIssuer.headers.get("location")!);

  // The browser follows the issuer's redirect to the public host; the proxy forwards it.
  const callback = browser.absorb(await GET(browser.request(back.pathname + back.search)));
  return { start, authorizeUrl, back, callback };
}

describe("OIDC behind a TLS proxy", () => {
  it("uses the public URL (--public-url / AUTH_URL) for the authorize step, the token exchange and the redirect home", async () => {
    serve({ publicUrl: PUBLIC });
    const browser = new ProxiedBrowser({ bind: BIND, host: BIND, forwarded: PROXY });
    const { start, back, callback } = await signInWithOidc(browser);

    const redirectUri = `${PUBLIC}/api/auth/callback/oidc`;
    expect(issuer.authorizeRequests).toHaveLength(1);
    expect(issuer.authorizeRequests[0]!.get("redirect_uri")).toBe(redirectUri);
    expect(issuer.authorizeRequests[0]!.get("code_challenge_method")).toBe("S256");
    expect(back.origin + back.pathname).toBe(redirectUri);

    expect(issuer.tokenRequests).toHaveLength(1);
    const token = issuer.tokenRequests[0]!;
    expect(token.body.get("redirect_uri")).toBe(redirectUri);
    expect(token.body.get("code_verifier")).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(token.status).toBe(200);

    // Signed in: home to the callbackUrl on the public host, with a Secure session cookie.
    expect(callback.status).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC}/runs`);
    const session = ProxiedBrowser.setCookies(callback).find((c) => c.name === "__Secure-authjs.session-token");
    expect(session?.attrs).toContain("secure");
    expect(ProxiedBrowser.setCookies(start).every((c) => c.attrs.includes("secure"))).toBe(true);

    const user = await sessionUserFromCookies(browser.cookieHeader());
    expect(user).toMatchObject({ name: "Ada_Lovelace", role: "member" });
    expect(findUser(getDb(), "Ada_Lovelace")?.id).toBe(user?.id);
  });

  it("with --trust-proxy and no public URL, takes the host and scheme from X-Forwarded-Host/Proto", async () => {
    serve({ trustProxy: true });
    const browser = new ProxiedBrowser({ bind: BIND, host: BIND, forwarded: PROXY });
    const { callback } = await signInWithOidc(browser, "/runs?x=1");
    const redirectUri = `${PUBLIC}/api/auth/callback/oidc`;
    expect(issuer.authorizeRequests[0]!.get("redirect_uri")).toBe(redirectUri);
    expect(issuer.tokenRequests[0]!.body.get("redirect_uri")).toBe(redirectUri);
    expect(issuer.tokenRequests[0]!.status).toBe(200);
    expect(callback.headers.get("location")).toBe(`${PUBLIC}/runs?x=1`);
    expect((await sessionUserFromCookies(browser.cookieHeader()))?.name).toBe("Ada_Lovelace");
  });

  it("without --trust-proxy, forwarded headers from anyone are ignored: the Host header decides, cookies are not Secure", async () => {
    serve({});
    const browser = new ProxiedBrowser({ bind: BIND, host: "rlboard.local:7788", forwarded: { "x-forwarded-host": "evil.test", "x-forwarded-proto": "https" } });
    const { callback } = await signInWithOidc(browser);
    const redirectUri = "http://rlboard.local:7788/api/auth/callback/oidc";
    expect(issuer.authorizeRequests[0]!.get("redirect_uri")).toBe(redirectUri);
    expect(issuer.tokenRequests[0]!.body.get("redirect_uri")).toBe(redirectUri);
    expect(callback.headers.get("location")).toBe("http://rlboard.local:7788/runs");
    const names = ProxiedBrowser.setCookies(callback).map((c) => c.name);
    expect(names).toContain("authjs.session-token");
    expect(names.some((n) => n.startsWith("__Secure-"))).toBe(false);
    expect((await sessionUserFromCookies(browser.cookieHeader()))?.name).toBe("Ada_Lovelace");
  });

  it("as `serve --public-url` starts it: AUTH_URL in the server's environment, which Auth.js also reads itself", async () => {
    const vars = serverEnvVars({
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-oidc-")),
      publicUrl: parsePublicUrl(`${PUBLIC}/`),
    });
    const parsed = parseServerEnv(vars);
    serve({ dataDir: parsed.dataDir, publicUrl: parsed.publicUrl, trustProxy: parsed.trustProxy });
    const saved = process.env.AUTH_URL;
    process.env.AUTH_URL = vars.AUTH_URL;
    try {
      const browser = new ProxiedBrowser({ bind: BIND, host: BIND, forwarded: PROXY });
      const { callback } = await signInWithOidc(browser);
      const redirectUri = `${PUBLIC}/api/auth/callback/oidc`;
      expect(issuer.authorizeRequests[0]!.get("redirect_uri")).toBe(redirectUri);
      expect(issuer.tokenRequests[0]!.body.get("redirect_uri")).toBe(redirectUri);
      expect(callback.headers.get("location")).toBe(`${PUBLIC}/runs`);
      expect((await sessionUserFromCookies(browser.cookieHeader()))?.name).toBe("Ada_Lovelace");
    } finally {
      if (saved === undefined) delete process.env.AUTH_URL;
      else process.env.AUTH_URL = saved;
    }
  });

  it("keeps a loopback public host exactly as the browser has it (NextRequest would say localhost)", async () => {
    serve({ trustProxy: true });
    const browser = new ProxiedBrowser({ bind: BIND, host: BIND, forwarded: { "x-forwarded-host": "127.0.0.1:8443", "x-forwarded-proto": "https" } });
    const { callback } = await signInWithOidc(browser);
    const redirectUri = "https://127.0.0.1:8443/api/auth/callback/oidc";
    expect(issuer.authorizeRequests[0]!.get("redirect_uri")).toBe(redirectUri);
    expect(issuer.tokenRequests[0]!.body.get("redirect_uri")).toBe(redirectUri);
    expect(callback.headers.get("location")).toBe("https://127.0.0.1:8443/runs");
  });

  it("never redirects home to another origin after sign-in", async () => {
    serve({ publicUrl: PUBLIC });
    const browser = new ProxiedBrowser({ bind: BIND, host: BIND, forwarded: PROXY });
    const { callback } = await signInWithOidc(browser, "https://evil.test/steal");
    expect(callback.headers.get("location")).toBe(PUBLIC);
  });
});

describe("sign-in server actions (the login form, the SSO button)", () => {
  // The headers as Next hands them to a server action: it fills X-Forwarded-Host from Host
  // and X-Forwarded-Proto from the socket when the client sent none.
  const direct = { host: "127.0.0.1:7788", "x-forwarded-host": "127.0.0.1:7788", "x-forwarded-proto": "http" };
  const tlsProxy = { host: "dash.lab.test", "x-forwarded-host": "dash.lab.test", "x-forwarded-proto": "https" };
  const cases: [string, Partial<ServerEnvironment>, Record<string, string>, boolean][] = [
    ["direct, no settings", {}, direct, true],
    ["direct, a client-sent X-Forwarded-Host", {}, { ...direct, "x-forwarded-host": "evil.test" }, false],
    ["direct, a client-sent X-Forwarded-Proto: https", {}, { ...direct, "x-forwarded-proto": "https" }, false],
    ["a TLS proxy, rlboard not told", {}, tlsProxy, false],
    ["a TLS proxy with RLBOARD_SECURE_COOKIES=1", { secureCookies: true }, tlsProxy, true],
    ["a TLS proxy with --trust-proxy", { trustProxy: true }, tlsProxy, true],
    ["a TLS proxy with --public-url", { publicUrl: PUBLIC }, tlsProxy, true],
  ];
  it.each(cases)("%s (trusted: %s)", (_name, env, headers, trusted) => {
    serve(env);
    expect(serverActionOriginTrusted(new Headers(headers))).toBe(trusted);
  });
});
