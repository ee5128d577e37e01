/**
 * The start's requests to itself (lib/server/warmup.ts, phase 3) are safe to send: every
 * API route the warm-up loads — hence asks — answers a GET with WARMUP_TOKEN 401 in its
 * real route handler, before a run is opened or noted; no token the server issues is that
 * one; and `/api/health` answers only once those requests are done. Real route handlers,
 * a real data dir and run.
 */
import fs from "node:fs";
import { NextRequest } from "next/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "@/lib/server/auth/users";
import { getDb } from "@/lib/server/db";
import { recentlyOpenedRuns } from "@/lib/server/runs/recent";
import { isWarmRoute, routeRequestPath, WARMUP_PAGES, WARMUP_TOKEN } from "@/lib/server/warmup";
import { proxy } from "@/proxy";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, callRoute, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET as healthGET } from "./health/route";
import { GET as metaGET } from "./meta/route";

type Handler = typeof metaGET;

let b: RunBuilder;
let server: TestServer;

beforeAll(async () => {
  b = new RunBuilder()
    .meta({ run_name: "warm", start_ts: 1000, args: {} })
    .laneCatalog({ "n1:0": { ranks: [0], roles: ["train"] } })
    .phases(phase("actor_train", 1050, 1090, { gpus: [0] }))
    .gpu({ ts: 1000, node: "n1", gpu: 0, util: 50, mem_mb: 100, power_w: 200 });
  server = await setupTestServer({ dumpDetails: b.runDir });
});

afterAll(() => fs.rmSync(b.runDir, { recursive: true, force: true }));

/** Every route module under app/api, by the page name Next's manifest gives it. */
const modules = import.meta.glob<{ GET?: Handler }>("./**/route.ts");
const routes = Object.keys(modules).map((file) => ({ file, page: `/api/${file.slice(2, -".ts".length)}` }));

describe("the warm-up's requests to the server itself", () => {
  it("are answered 401 by every route the warm-up asks, which opens or notes no run", async () => {
    const warm = routes.filter((r) => isWarmRoute(r.page));
    // The rule leaves out what it should, and asks the routes a run's screens use.
    expect(warm.length).toBeGreaterThanOrEqual(20);
    for (const cold of ["/api/health/route", "/api/auth/[...nextauth]/route", "/api/export/route", "/api/[...unknown]/route"]) {
      expect(routes.some((r) => r.page === cold), cold).toBe(true);
      expect(isWarmRoute(cold), cold).toBe(false);
    }
    for (const page of ["/api/meta/route", "/api/timeline/topology/route", "/api/rollout/[rolloutId]/trajectories/route"]) {
      expect(warm.some((r) => r.page === page), page).toBe(true);
    }
    for (const { file, page } of warm) {
      const path = routeRequestPath(page);
      expect(path, page).not.toBeNull();
      const { GET } = await modules[file]!();
      expect(GET, `${page} answers GET`).toBeTypeOf("function");
      const params = Object.fromEntries([...page.matchAll(/\[([A-Za-z_]\w*)\]/g)].map((m) => [m[1]!, "0"]));
      const r = await callJson<{ error: { code: string } }>(GET!, path!, { token: WARMUP_TOKEN, params });
      expect(r.status, path!).toBe(401);
      expect(r.body.error.code, path!).toBe("unauthorized");
    }
    expect(recentlyOpenedRuns(getDb())).toEqual([]);
    // The same route with a real token does read the run (the test above is not vacuous).
    expect((await callRoute(metaGET, "/api/meta", { token: server.token })).status).toBe(200);
    expect(recentlyOpenedRuns(getDb())).toHaveLength(1);
  });

  it("ask only pages the proxy lets in without a session (others would be redirected, not rendered)", async () => {
    expect(WARMUP_PAGES).toEqual(["/login"]);
    for (const page of WARMUP_PAGES) {
      const res = await proxy(new NextRequest(`http://127.0.0.1:3000${page}`, { headers: { authorization: `Bearer ${WARMUP_TOKEN}` } }));
      expect(res.headers.get("x-middleware-next"), page).toBe("1");
      expect(res.headers.get("location")).toBeNull();
    }
    // A dashboard page is not among them: without a session it is a redirect to /login.
    const res = await proxy(new NextRequest("http://127.0.0.1:3000/runs", { headers: { authorization: `Bearer ${WARMUP_TOKEN}` } }));
    expect(res.status).toBe(307);
    expect(new URL(res.headers.get("location")!).pathname).toBe("/login");
  });

  it("send a token no user can hold: the server's tokens have another shape", () => {
    const tokens = [server.token, ...Array.from({ length: 20 }, () => createToken(getDb(), "tester"))];
    for (const t of tokens) {
      expect(t).toMatch(/^rlb_[A-Za-z0-9_-]{43}$/);
      expect(t).not.toBe(WARMUP_TOKEN);
    }
    expect(WARMUP_TOKEN).not.toMatch(/^rlb_/);
  });
});

describe("/api/health after a start", () => {
  const g = globalThis as { __rlboardRequestWarmup?: Promise<number> };
  afterEach(() => {
    delete g.__rlboardRequestWarmup;
  });

  it("answers once the warm-up's requests are done, and at once afterwards", async () => {
    let finish!: (n: number) => void;
    g.__rlboardRequestWarmup = new Promise<number>((r) => (finish = r));
    let answered = false;
    const pending = callJson(healthGET, "/api/health", { token: null }).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 80));
    expect(answered).toBe(false);
    finish(3);
    expect(await pending).toEqual({ status: 200, body: { ok: true } });
    const t = performance.now();
    expect((await callJson(healthGET, "/api/health", { token: null })).status).toBe(200);
    expect(performance.now() - t).toBeLessThan(50);
  });
});
