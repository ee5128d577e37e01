/**
 * The shipped collector: the esbuild bundle (collector/build.ts) and the
 * launcher `npm run collector` runs (collector/launch.sh). The bundle must be
 * self-contained (only node: built-ins left as imports), rebuild exactly when
 * an input changed, and behave like the source: same CLI errors, same zod
 * messages for rejected records (zod is tree-shaken in the bundle), same
 * clean SIGTERM shutdown. The launcher must exec, so the daemon keeps its pid.
 */
import { mkdtempSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAM_SCHEMAS } from "@/lib/store/format";
import type { StreamName } from "@/lib/store/format";
import { buildCollector, staleReason } from "./build";
import { describeIssue } from "./ingest";
import { CLI_LAUNCHER, runCli, spawnCollector } from "./testing/child-collector";
import { postJson } from "./testing/http";

let dir: string;
let outfile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rlb-bundle-"));
  outfile = join(dir, "collector.mjs");
  expect((await buildCollector({ outfile })).built).toBe(true);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bundleCli = (): string[] => [process.execPath, outfile];

describe("collector bundle", () => {
  it("is one file whose only imports are node: built-ins", () => {
    const text = readFileSync(outfile, "utf8");
    const specifiers = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s?.startsWith("node:"))).toEqual([]);
    expect(text).not.toMatch(/import\(["'](?!node:)/);
    // Node's fetch (undici) costs ~35 MB of RSS once used; outgoing HTTP goes through http-client.ts.
    expect(text).not.toMatch(/\bfetch\(/);
  });

  it("is up to date right after a build, stale when an input is newer or its input list is gone", async () => {
    expect(await staleReason(outfile)).toBeUndefined();
    expect((await buildCollector({ outfile, ifStale: true })).built).toBe(false);
    const old = new Date(1_000_000_000_000);
    utimesSync(outfile, old, old);
    expect(await staleReason(outfile)).toMatch(/ changed$/);
    expect((await buildCollector({ outfile, ifStale: true })).built).toBe(true);
    expect(await staleReason(outfile)).toBeUndefined();
    await unlink(`${outfile}.inputs.json`);
    expect(await staleReason(outfile)).toMatch(/inputs\.json is missing/);
    await buildCollector({ outfile });
    await unlink(outfile);
    expect(await staleReason(outfile)).toMatch(/collector\.mjs is missing$/);
    await buildCollector({ outfile });
  });

  it("prints usage and fails bad flags like the source CLI", async () => {
    const help = runCli(["--help"], process.env, bundleCli());
    expect((await help.exited).code).toBe(0);
    const bad = runCli(["--dump-details", dir, "--scrape-interval", "0"], process.env, bundleCli());
    expect((await bad.exited).code).toBe(1);
    expect(bad.stderr()).toBe("rlboard-collector: error: --scrape-interval must be > 0 (see --help)\n");
  });

  it("rejects bad records with the same zod messages as the source and stops cleanly", async () => {
    // The fixed 2025 timestamps below are far from today's clock: turn the skew check off.
    const c = await spawnCollector(["--dump-details", join(dir, "run"), "--gpu-source", "none", "--max-clock-skew", "0"], process.env, 20_000, bundleCli());
    const gpu = { ts: 1755000041.5, node: "10.0.0.1", gpu: 0, util: 87, mem_mb: 61234, power_w: 612 };
    const phase = { name: "actor_train", t0: 1755000081.2, t1: 1755000120.7, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" };
    const engine = { ts: 1755000040.0, addr: "http://127.0.0.1:1", metric: "m", labels: { dp_rank: "0" }, value: 1.5 };
    const cases: [string, StreamName, unknown, unknown][] = [
      ["gpu", "gpu_util", gpu, { ...gpu, ts: "x" }],
      ["gpu", "gpu_util", gpu, { ...gpu, extra: 1 }],
      ["gpu", "gpu_util", gpu, { ...gpu, gpu: -1 }],
      ["phases", "phases", phase, { ...phase, role: "judge" }],
      ["phases", "phases", phase, { ...phase, t1: -2 }],
      ["phases", "phases", phase, { ...phase, gpus: [1.5] }],
      ["engine", "engine_series", engine, { ...engine, labels: { dp_rank: 0 } }],
      ["engine", "engine_series", engine, { ...engine, ts: 1e13 }],
    ];
    for (const [route, stream, ok, bad] of cases) {
      const res = await postJson(`${c.url}/v1/${route}`, { records: [ok, bad] });
      const expected = STREAM_SCHEMAS[stream].safeParse(bad);
      expect(expected.success).toBe(false);
      expect(res).toEqual({
        status: 400,
        json: { error: { code: "bad_request", message: describeIssue(1, expected.error!) }, accepted: 1, rejected: 1 },
      });
    }
    c.proc.kill("SIGTERM");
    expect(await c.exited).toEqual({ code: 0, signal: null });
    const gpuLines = readFileSync(join(dir, "run/dashboard/gpu_util/20250812_12.jsonl"), "utf8");
    expect(gpuLines).toBe('{"ts":1755000041.5,"node":"10.0.0.1","gpu":0,"util":87,"mem_mb":61234,"power_w":612}\n'.repeat(3));
  });
});

describe("collector/launch.sh", () => {
  it("runs the bundle in its own process (exec: the daemon is the launched pid)", async () => {
    const c = await spawnCollector(["--dump-details", join(dir, "launched"), "--gpu-source", "none"], process.env, 60_000, CLI_LAUNCHER);
    const health = (await (await fetch(`${c.url}/health`)).json()) as { pid: number };
    expect(health.pid).toBe(c.proc.pid);
    expect(readFileSync(`/proc/${health.pid}/cmdline`, "utf8").split("\0")).toContain(join(process.cwd(), "collector/dist/collector.mjs"));
    c.proc.kill("SIGTERM");
    expect(await c.exited).toEqual({ code: 0, signal: null });
  }, 90_000);
});
