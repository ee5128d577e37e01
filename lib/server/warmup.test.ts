import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectWarmupGarbage, warmRouteModules } from "@/lib/server/warmup";

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
