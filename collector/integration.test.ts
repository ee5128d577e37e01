/**
 * End to end: the real CLI as a child process, two fake SGLang engines, a fake
 * nvidia-smi first on PATH, the Python client pushing phases and metrics;
 * SIGTERM; then every stream file is checked line by line: each line must be
 * schema-valid and re-serialize to exactly the same bytes.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPartitioned, parsePyJson, STREAMS, STREAM_SCHEMAS } from "@/lib/store/format";
import type { EngineSample, GpuProcessSample, GpuSample, StreamName, TopologySnapshot } from "@/lib/store/format";
import { serializeRecord } from "@/lib/store/writer/serialize";
import { runCli, spawnCollector, waitFor } from "./testing/child-collector";
import { sglangFixture, startFakeEngine } from "./testing/fake-sglang";
import type { FakeEngine } from "./testing/fake-sglang";
import { writeFakeNvidiaSmi } from "./testing/fake-smi";

let root: string;
let dump: string;
let engines: FakeEngine[];
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rlb-e2e-"));
  dump = join(root, "run");
  writeFakeNvidiaSmi(root);
  engines = [await startFakeEngine(sglangFixture("engine_direct_dp4.txt")), await startFakeEngine(sglangFixture("engine_metrics_direct.txt"))];
});
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  rmSync(root, { recursive: true, force: true });
});

const PUSH = `
import sys, time
sys.path.insert(0, ${JSON.stringify(resolve(process.cwd(), "collector/clients/python"))})
from rlboard_client import RlboardClient
c = RlboardClient(sys.argv[1], node="10.0.0.1", gpus=[0], rank=0)
with c.phase_ctx("actor_train"):
    time.sleep(0.05)
c.phase("train_wait", 1755000070.0, 1755000071.0)
c.log_metrics("rollout/step", 0, {"perf/step_time": 95.0, "perf/wait_time_ratio": 0.4, "rollout/step": 0}, ts=1755000125.0)
assert c.flush(10)
c.close()
assert c.stats["failed"] == 0 and c.stats["sent"] == 4, c.stats
`;

function pushWithPython(url: string): Promise<number | null> {
  return new Promise((done) => {
    const p = spawn("python3", ["-c", PUSH, url], { stdio: "inherit", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
    p.on("close", (code) => done(code));
  });
}

function streamLines(dash: string, stream: StreamName): string[] {
  const files = isPartitioned(stream)
    ? existsSync(join(dash, stream))
      ? readdirSync(join(dash, stream)).map((f) => join(dash, stream, f))
      : []
    : existsSync(join(dash, `${stream}.jsonl`))
      ? [join(dash, `${stream}.jsonl`)]
      : [];
  return files.flatMap((f) => {
    const text = readFileSync(f, "utf8");
    expect(text.endsWith("\n"), f).toBe(true);
    expect(/^[\x20-\x7e\n]*$/.test(text), `${f} is 7-bit printable ASCII`).toBe(true);
    return text.slice(0, -1).split("\n");
  });
}

describe("collector end to end", () => {
  it("writes every stream in the Python byte format and exits 0 on SIGTERM", async () => {
    const env = { ...process.env, PATH: `${root}:${process.env.PATH ?? ""}` };
    const c = await spawnCollector(
      [
        "--dump-details", dump,
        "--engines", engines.map((e) => e.url).join(","),
        "--scrape-interval", "0.5",
        "--gpu-source", "nvidia-smi",
        "--gpu-interval", "0.2",
        "--gpu-process-interval", "0.5",
        "--node", "10.0.0.1",
        "--flush-interval", "0.3",
        "--run-name", "e2e-run",
        "--max-clock-skew", "0", // the Python producer stamps fixed 2025 times
      ],
      env,
    );
    expect(await pushWithPython(c.url)).toBe(0);
    const dash = join(dump, "dashboard");
    await waitFor(
      () => ["engine_series", "gpu_util", "gpu_processes"].every((d) => existsSync(join(dash, d))) && existsSync(join(dash, "topology.jsonl")),
      15_000,
      "all streams",
    );
    c.proc.kill("SIGTERM");
    expect(await c.exited).toEqual({ code: 0, signal: null });
    expect(c.stderr()).toContain("SIGTERM received; stopping");
    expect(existsSync(join(dash, ".collector.lock"))).toBe(false);

    const parsed: Partial<Record<StreamName, unknown[]>> = {};
    for (const stream of STREAMS) {
      const lines = streamLines(dash, stream);
      parsed[stream] = lines.map((line) => {
        const rec = STREAM_SCHEMAS[stream].parse(parsePyJson(line));
        expect(serializeRecord(stream, rec as never), `${stream} line re-serializes`).toBe(line);
        return rec;
      });
    }
    expect(parsed.metrics).toHaveLength(1);
    expect(streamLines(dash, "metrics")[0]).toBe(
      '{"ts":1755000125.0,"step_key":"rollout/step","step":0,"metrics":{"perf/step_time":95.0,"perf/wait_time_ratio":0.4,"rollout/step":0}}',
    );
    expect(parsed.phases).toHaveLength(3); // OPEN marker + closed actor_train, train_wait
    expect(parsed.data_buffer).toHaveLength(0);

    const eng = parsed.engine_series as EngineSample[];
    expect(new Set(eng.map((r) => r.addr))).toEqual(new Set(engines.map((e) => e.url)));
    const firstTick = eng.filter((r) => r.ts === eng[0]?.ts);
    expect(firstTick.length).toBe(46 + 2); // both engines in one tick share its ts

    const gpu = parsed.gpu_util as GpuSample[];
    expect(new Set(gpu.map((g) => g.gpu))).toEqual(new Set([0, 2]));
    expect(gpu.every((g) => g.node === "10.0.0.1")).toBe(true);
    const procs = parsed.gpu_processes as GpuProcessSample[];
    expect(procs.some((p) => p.pid === 4321 && p.gpu === 0 && p.mem_mb === 40960)).toBe(true);

    // Scrape-only engines become external topology entries.
    const topo = parsed.topology as TopologySnapshot[];
    expect(topo.at(-1)?.engines.map((e) => [e.addr, e.worker_type, e.engine_rank])).toEqual(
      engines.map((e) => [e.url, "external", -1]).sort(),
    );

    const catalog = JSON.parse(readFileSync(join(dash, "lane_catalog.json"), "utf8")) as { lanes: Record<string, unknown> };
    expect(catalog.lanes["10.0.0.1:0"]).toEqual({ ranks: [0], engine_addrs: [], roles: ["train"] });
    expect(catalog.lanes["10.0.0.1:2"]).toEqual({ ranks: [], engine_addrs: [], roles: [] });
    expect(readFileSync(join(dash, "meta.json"), "utf8")).toMatch(/^\{\n "run_name": "e2e-run",\n "start_ts": \d+\.\d+,\n "args": \{\},\n "schema_version": 1\n\}$/);
  });

  it("exits 1 with one stderr line on bad flags and on an unusable directory", async () => {
    const bad = runCli(["--dump-details", dump, "--scrape-interval", "0"]);
    expect((await bad.exited).code).toBe(1);
    expect(bad.stderr()).toBe("rlboard-collector: error: --scrape-interval must be > 0 (see --help)\n");
    // dump/dashboard/meta.json exists from the first test; a path through a file cannot be created.
    const through = runCli(["--dump-details", join(dump, "dashboard", "meta.json", "x"), "--gpu-source", "none", "--port", "0"]);
    expect((await through.exited).code).toBe(1);
    expect(through.stderr()).toMatch(/^rlboard-collector: error: ENOTDIR: .*\n$/);
  });
});
