import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  collectWarmupGarbage,
  ownOrigin,
  requestWarmupSettled,
  startRequestWarmup,
  warmRequests,
  routeRequestPath,
  warmRouteModules,
  warmupRequestPaths,
  WARMUP_TOKEN,
} from "@/lib/server/warmup";
import { freePort } from "@/lib/testing/net";

const made: string[] = [];
afterEach(() => {
  delete process.env.RLBOARD_DIST_DIR;
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A build folder whose route entries record, in a shared log file, that their userland was loaded. */
function fakeBuild(pages: string[]): { dist: string; log: string } {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-warmup-"));
  made.push(dist);
  const log = path.join(dist, "loaded.log");
  const manifest: Record<string, string> = {};
  for (const page of pages) {
    const file = `app${page}.js`;
    manifest[page] = file;
    const abs = path.join(dist, "server", file);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(
      abs,
      `module.exports = { routeModule: { async ensureUserland() { require("node:fs").appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(page)} + "\\n"); } } };\n`,
    );
  }
  fs.writeFileSync(path.join(dist, "server", "app-paths-manifest.json"), JSON.stringify(manifest));
  return { dist, log };
}

describe("warmRouteModules", () => {
  it("loads the API routes of a run's screens, the first screen's first, and leaves pages and rare routes alone", async () => {
    const { dist, log } = fakeBuild([
      "/(dashboard)/page",
      "/api/advisory/route",
      "/api/export/route",
      "/api/auth/[...nextauth]/route",
      "/api/timeline/topology/route",
      "/api/rollout/[rolloutId]/summary/route",
      "/api/rollout/[rolloutId]/drift/route",
      "/api/meta/route",
    ]);
    process.env.RLBOARD_DIST_DIR = dist;
    expect(await warmRouteModules()).toBe(4);
    expect(fs.readFileSync(log, "utf8").trim().split("\n")).toEqual([
      "/api/meta/route",
      "/api/timeline/topology/route",
      "/api/advisory/route",
      "/api/rollout/[rolloutId]/summary/route",
    ]);
    // Phase 3 asks the sign-in page, then the routes it loaded, in the same order.
    expect(warmupRequestPaths()).toEqual(["/login", "/api/meta", "/api/timeline/topology", "/api/advisory", "/api/rollout/0/summary"]);
  });

  it("does nothing without a build, and skips an entry of another shape", async () => {
    process.env.RLBOARD_DIST_DIR = path.join(os.tmpdir(), "rlboard-warmup-none-" + process.pid);
    expect(await warmRouteModules()).toBe(0);
    const { dist } = fakeBuild(["/api/meta/route"]);
    fs.writeFileSync(path.join(dist, "server", "app/api/meta/route.js"), "module.exports = {};\n");
    process.env.RLBOARD_DIST_DIR = dist;
    expect(await warmRouteModules()).toBe(0);
  });

  it("starts no route after its deadline", async () => {
    const { dist, log } = fakeBuild(["/api/meta/route", "/api/runs/route"]);
    process.env.RLBOARD_DIST_DIR = dist;
    expect(await warmRouteModules(performance.now() - 1)).toBe(0);
    expect(fs.existsSync(log)).toBe(false);
  });
});

describe("collectWarmupGarbage", () => {
  const g = globalThis as { gc?: unknown };
  const had = Object.prototype.hasOwnProperty.call(g, "gc");
  const saved = g.gc;
  afterEach(() => {
    if (had) g.gc = saved;
    else delete g.gc;
  });

  it("runs a full collection where the server was started with --expose-gc", () => {
    let calls = 0;
    g.gc = () => void calls++;
    collectWarmupGarbage();
    expect(calls).toBe(1);
  });

  it("is a no-op without it", () => {
    delete g.gc;
    expect(() => collectWarmupGarbage()).not.toThrow();
    g.gc = "not a function";
    expect(() => collectWarmupGarbage()).not.toThrow();
  });
});

describe("routeRequestPath", () => {
  it("asks a route at its path, each dynamic segment 0; a catch-all is not asked", () => {
    expect(routeRequestPath("/api/meta/route")).toBe("/api/meta");
    expect(routeRequestPath("/api/rollout/[rolloutId]/summary/route")).toBe("/api/rollout/0/summary");
    expect(routeRequestPath("/api/rollout/[rolloutId]/sample/[sampleIndex]/tokens/route")).toBe("/api/rollout/0/sample/0/tokens");
    expect(routeRequestPath("/api/[...unknown]/route")).toBeNull();
    expect(routeRequestPath("/api/docs/[[...slug]]/route")).toBeNull();
    expect(routeRequestPath("/(dashboard)/page")).toBeNull();
  });
});

describe("ownOrigin", () => {
  it("takes the origin next start recorded, else the loopback address at PORT", () => {
    expect(ownOrigin({ __NEXT_PRIVATE_ORIGIN: "http://127.0.0.1:7799", PORT: "1" })).toBe("http://127.0.0.1:7799");
    expect(ownOrigin({ __NEXT_PRIVATE_ORIGIN: "http://localhost:3000/" })).toBe("http://localhost:3000");
    expect(ownOrigin({ __NEXT_PRIVATE_ORIGIN: "not a url", PORT: "4100" })).toBe("http://127.0.0.1:4100");
    expect(ownOrigin({ PORT: "4100" })).toBe("http://127.0.0.1:4100");
  });

  it("knows none over https, without a port, or with a port that is not one", () => {
    expect(ownOrigin({ __NEXT_PRIVATE_ORIGIN: "https://localhost:3000", PORT: "3000" })).toBeNull();
    expect(ownOrigin({})).toBeNull();
    for (const PORT of ["0", "70000", "3000x", "-1", ""]) expect(ownOrigin({ PORT })).toBeNull();
  });
});

/** A real HTTP server on 127.0.0.1 that records what it is asked and answers after `delayMs` (never, when null). */
async function recordingServer(delayMs: number | null = 0) {
  const seen: { url: string; headers: http.IncomingHttpHeaders; at: number }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers, at: performance.now() });
    if (delayMs === null) return;
    setTimeout(() => res.writeHead(401, { "content-type": "application/json" }).end('{"detail":"sign in"}'), delayMs);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const PATHS = ["/api/meta", "/api/timeline/topology", "/api/rollout/0/summary"];

describe("warmRequests", () => {
  it("asks each path once, in order, with the warm-up token and no cookie, and counts the answers (401 included)", async () => {
    const s = await recordingServer();
    try {
      expect(await warmRequests(s.origin, PATHS)).toBe(PATHS.length);
      expect(s.seen.map((r) => r.url)).toEqual(PATHS);
      for (const r of s.seen) {
        expect(r.headers.authorization).toBe(`Bearer ${WARMUP_TOKEN}`);
        expect(r.headers.cookie).toBeUndefined();
      }
    } finally {
      await s.close();
    }
  });

  it("resolves 0 where nothing listens, and gives up a path that does not answer in time", async () => {
    expect(await warmRequests(`http://127.0.0.1:${await freePort()}`, PATHS)).toBe(0);
    const s = await recordingServer(null);
    try {
      const t = performance.now();
      expect(await warmRequests(s.origin, ["/a", "/b"], 150)).toBe(0);
      expect(performance.now() - t).toBeGreaterThanOrEqual(290);
      expect(s.seen.map((r) => r.url)).toEqual(["/a", "/b"]);
      // Nothing is asked once its budget is spent.
      expect(await warmRequests(s.origin, ["/c", "/d", "/e"], 100, 150)).toBe(0);
      expect(s.seen.map((r) => r.url)).toEqual(["/a", "/b", "/c", "/d"]);
    } finally {
      await s.close();
    }
  });
});

describe("startRequestWarmup / requestWarmupSettled", () => {
  const g = globalThis as { __rlboardRequestWarmup?: Promise<number> };
  afterEach(() => {
    delete g.__rlboardRequestWarmup;
  });

  it("settles at once where no warm-up was started (RLBOARD_WARMUP=0, tests, outside next start)", async () => {
    const t = performance.now();
    await requestWarmupSettled();
    expect(performance.now() - t).toBeLessThan(50);
  });

  it("sends the requests to the server's own address once, and settles after the last is answered", async () => {
    const s = await recordingServer(60);
    try {
      startRequestWarmup({ __NEXT_PRIVATE_ORIGIN: s.origin }, PATHS);
      startRequestWarmup({ __NEXT_PRIVATE_ORIGIN: s.origin }, PATHS); // once per process
      await requestWarmupSettled();
      const settledAt = performance.now();
      expect(s.seen.map((r) => r.url)).toEqual(PATHS);
      expect(settledAt - s.seen.at(-1)!.at).toBeGreaterThanOrEqual(55);
      expect(await g.__rlboardRequestWarmup).toBe(PATHS.length);
    } finally {
      await s.close();
    }
  });

  it("settles after its cap when the server does not answer, and at once without an origin", async () => {
    const s = await recordingServer(null);
    try {
      startRequestWarmup({ PORT: String(new URL(s.origin).port) }, PATHS);
      const t = performance.now();
      await requestWarmupSettled(120);
      const waited = performance.now() - t;
      expect(waited).toBeGreaterThanOrEqual(110);
      expect(waited).toBeLessThan(1_000);
      expect(s.seen.map((r) => r.url)).toEqual([PATHS[0]]);
    } finally {
      await s.close();
    }
    const started = () => g.__rlboardRequestWarmup;
    delete g.__rlboardRequestWarmup;
    startRequestWarmup({}, PATHS);
    expect(await started()).toBe(0);
    delete g.__rlboardRequestWarmup;
    startRequestWarmup({ PORT: "4100" }, []); // nothing loaded: nothing asked
    expect(await started()).toBe(0);
  });
});
