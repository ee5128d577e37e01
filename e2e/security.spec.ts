/**
 * The login gate as an attacker and an operator try it (#11): every way into a page —
 * HTML, RSC payloads, prefetches, server actions — with a forged or ended session gets
 * the login redirect or a 401, and no run data; no payload carries an absolute path.
 * Real HTTP against the production server cli/e2e.ts started; operator actions go through
 * the real `npm run users` CLI on the server's data dir.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { E2E } from "./env";

test.use({ storageState: { cookies: [], origins: [] } });

const RUN = "miles-demo";
const PAGES = ["/", `/runs/${RUN}/timeline`, `/runs/${RUN}/metrics`, `/runs/${RUN}/rollout/0`, `/runs/${RUN}/rollout/0/sample/0`, "/admin"];
/** Strings that only appear when run data leaked: run ids/names, node IPs, engine addresses. */
const LEAKS = [RUN, "dummy-telemetry", "10.0.0.1", "15000", E2E.runsRoot];

function usersCli(args: string[], stdin = ""): string {
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join("cli", "users.ts"), ...args, "--data-dir", E2E.dataDir], { input: stdin, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`users ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

async function anon(playwright: { request: { newContext: (o: object) => Promise<APIRequestContext> } }, cookie?: string) {
  return playwright.request.newContext({
    baseURL: E2E.baseURL,
    storageState: { cookies: [], origins: [] },
    extraHTTPHeaders: cookie ? { cookie } : {},
  });
}

/** Sign in through Auth.js' credentials endpoint, as the login form does; returns the Cookie header. */
async function signIn(ctx: APIRequestContext, name: string, password: string): Promise<string> {
  const { csrfToken } = (await (await ctx.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await ctx.post("/api/auth/callback/credentials", { form: { name, password, csrfToken }, maxRedirects: 0 });
  expect(res.status()).toBe(302);
  const state = await ctx.storageState();
  const session = state.cookies.find((c) => c.name.endsWith("authjs.session-token"));
  expect(session, "a session cookie after sign-in").toBeTruthy();
  return `${session!.name}=${session!.value}`;
}

test.describe("forged session cookie", () => {
  for (const p of PAGES) {
    for (const kind of ["html", "rsc", "prefetch"] as const) {
      test(`${kind} ${p} → login redirect, no data`, async ({ playwright }) => {
        const ctx = await anon(playwright, "authjs.session-token=x");
        const headers: Record<string, string> = kind === "html" ? {} : { RSC: "1" };
        if (kind === "prefetch") headers["Next-Router-Prefetch"] = "1";
        const url = kind === "html" ? p : `${p}${p.includes("?") ? "&" : "?"}_rsc`;
        const res = await ctx.get(url, { headers, maxRedirects: 0 });
        expect(res.status()).toBe(307);
        expect(res.headers().location).toMatch(/\/login(\?next=|$)/);
        const body = await res.text();
        for (const leak of LEAKS.filter((l) => !p.includes(l))) expect(body).not.toContain(leak);
        // The bogus cookie is cleared, so the browser does not keep sending it.
        expect(res.headers()["set-cookie"] ?? "").toMatch(/authjs\.session-token=;/);
      });
    }
  }

  test("a server action with a forged cookie → 401 JSON; from another origin → 403 JSON", async ({ playwright }) => {
    const ctx = await anon(playwright, "authjs.session-token=x");
    const action = await ctx.post("/admin", { headers: { "Next-Action": "0".repeat(40) }, data: "[]", maxRedirects: 0 });
    expect(action.status()).toBe(401);
    expect(((await action.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const cross = await ctx.post("/login", { headers: { "Next-Action": "0".repeat(40), Origin: "https://evil.example" }, data: "[]", maxRedirects: 0 });
    expect(cross.status()).toBe(403);
    expect(((await cross.json()) as { detail: string }).detail).toMatch(/cross-origin/);
  });

  test("API routes with a forged cookie → 401", async ({ playwright }) => {
    const ctx = await anon(playwright, "authjs.session-token=x");
    for (const url of ["/api/runs", `/api/meta?run=${RUN}`, `/api/timeline/topology?run=${RUN}`]) {
      const res = await ctx.get(url);
      expect(res.status(), url).toBe(401);
    }
  });
});

test.describe("sessions end with their user", () => {
  for (const [what, act] of [
    ["removed", (n: string) => usersCli(["remove", n])],
    ["password changed", (n: string) => usersCli(["passwd", n, "--password-stdin"], "another-password-9\n")],
    ["tokens revoked", (n: string) => usersCli(["revoke-tokens", n])],
  ] as const) {
    test(`a signed-in browser loses access within seconds when its user is ${what}`, async ({ playwright }) => {
      const name = `sec-${what.replace(/\W/g, "")}-${Date.now() % 100000}`;
      usersCli(["add", name, "--password-stdin"], "sec-password-1\n");
      const ctx = await anon(playwright);
      const cookie = await signIn(ctx, name, "sec-password-1");
      const live = await anon(playwright, cookie);
      const before = await live.get(`/runs/${RUN}/timeline?_rsc`, { headers: { RSC: "1" }, maxRedirects: 0 });
      expect(before.status()).toBe(200);
      expect(await before.text()).toContain("10.0.0.1");
      expect((await live.get("/api/runs")).status()).toBe(200);
      act(name);
      await new Promise((r) => setTimeout(r, 2_500)); // the session cache holds a row ≤ 2 s
      const after = await live.get(`/runs/${RUN}/timeline?_rsc`, { headers: { RSC: "1" }, maxRedirects: 0 });
      expect(after.status()).toBe(307);
      expect(await after.text()).not.toContain("10.0.0.1");
      expect((await live.get("/api/runs")).status()).toBe(401);
      expect((await live.get(`/api/rollout/0/sample/0/messages?run=${RUN}`)).status()).toBe(401);
    });
  }
});

test("no absolute run path in any page, RSC payload or API answer a member gets", async ({ playwright }) => {
  const ctx = await anon(playwright);
  const cookie = await signIn(ctx, E2E.member, E2E.password);
  const live = await anon(playwright, cookie);
  const bodies: [string, string][] = [];
  for (const p of PAGES.filter((x) => x !== "/admin")) {
    bodies.push([p, await (await live.get(p)).text()]);
    bodies.push([`${p} (rsc)`, await (await live.get(`${p}?_rsc`, { headers: { RSC: "1" } })).text()]);
  }
  for (const u of ["/api/runs", `/api/meta?run=${RUN}`, `/api/timeline/topology?run=${RUN}`, `/api/rollout/0/summary?run=${RUN}`, "/api/runs?run=nope", `/api/meta?run=nope`]) {
    bodies.push([u, await (await live.get(u)).text()]);
  }
  const root = fs.realpathSync(E2E.runsRoot);
  for (const [where, body] of bodies) {
    expect(body.length, where).toBeGreaterThan(10);
    expect(body.includes(root) || body.includes(E2E.runsRoot), `${where} carries an absolute path`).toBe(false);
  }
});

test("a symlinked alias of a run is not listed", async ({ request }) => {
  const alias = path.join(E2E.runsRoot, "alias-of-miles");
  fs.symlinkSync(path.join(E2E.runsRoot, RUN), alias);
  try {
    const runs = (await (await request.get("/api/runs?refresh=true", { headers: { Authorization: `Bearer ${E2E.token}` } })).json()) as { runs: { id: string }[] };
    const ids = runs.runs.map((r) => r.id);
    expect(ids).toContain(RUN);
    expect(ids).not.toContain("alias-of-miles");
    const res = await request.get("/api/meta?run=alias-of-miles", { headers: { Authorization: `Bearer ${E2E.token}` } });
    expect(res.status()).toBe(404);
  } finally {
    fs.rmSync(alias);
  }
});

test("a path with malformed %-encoding → 400 JSON, on API routes and pages alike", async ({ playwright }) => {
  const ctx = await anon(playwright);
  for (const url of [`/api/rollout/%E0%A4%A/summary?run=${RUN}`, "/api/%zz", `/api/timeline/gpu%zz?run=${RUN}`, "/runs/%E0%A4%A/timeline", "/%"]) {
    const res = await ctx.get(url, { maxRedirects: 0, headers: { Authorization: `Bearer ${E2E.token}` } });
    expect(res.status(), url).toBe(400);
    expect(res.headers()["content-type"], url).toContain("application/json");
    expect(((await res.json()) as { detail: string }).detail).toBe("malformed percent-encoding in the request path");
  }
});

test("a method a route does not answer → 405 JSON naming what it answers, with Allow", async ({ playwright }) => {
  const ctx = await anon(playwright);
  for (const [method, url] of [
    ["PUT", "/api/runs"],
    ["DELETE", `/api/meta?run=${RUN}`],
    ["POST", `/api/timeline/gpu?run=${RUN}`],
    ["PATCH", `/api/rollout/0/summary?run=${RUN}`],
  ] as const) {
    for (const auth of [{ Authorization: `Bearer ${E2E.token}` }, {}] as Record<string, string>[]) {
      const res = await ctx.fetch(url, { method, headers: auth, maxRedirects: 0 });
      expect(res.status(), `${method} ${url}`).toBe(405);
      expect(res.headers()["allow"], url).toBe("GET, HEAD, OPTIONS");
      const body = (await res.json()) as { detail: string; error: { code: string; message: string } };
      expect(body.detail).toBe("Method Not Allowed");
      expect(body.error).toEqual({ code: "method_not_allowed", message: `${method} is not allowed on ${url.split("?")[0]}: it answers GET, HEAD, OPTIONS` });
      // nothing of the run in it
      expect(JSON.stringify(body)).not.toContain("dummy-telemetry");
    }
    const opt = await ctx.fetch(url, { method: "OPTIONS", maxRedirects: 0 });
    expect(opt.status(), `OPTIONS ${url}`).toBe(204);
    expect(opt.headers()["allow"]).toBe("GET, HEAD, OPTIONS");
  }
  // HEAD is GET without the body: the same gate
  expect((await ctx.fetch(`/api/meta?run=${RUN}`, { method: "HEAD" })).status()).toBe(401);
  expect((await ctx.fetch(`/api/meta?run=${RUN}`, { method: "HEAD", headers: { Authorization: `Bearer ${E2E.token}` } })).status()).toBe(200);
});
