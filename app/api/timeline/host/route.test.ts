import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GetHostResponse } from "@/lib/contracts/health";
import { RunBuilder } from "@/lib/store/telemetry/testing";
import { callJson, setupTestServer, type TestServer } from "@/lib/testing/api";
import { GET as advisoryGET } from "../../advisory/route";
import { GET } from "./route";

let b: RunBuilder;
let server: TestServer;
const H = Date.UTC(2026, 11, 1, 20, 0, 0) / 1000;

/** What the collector's sampler writes: 4 cores, a python process pinned at one core, fds near the limit. */
function record(k: number) {
  return {
    ts: H + 3000 + 10 * k,
    node: "10.0.0.2",
    ncpu: 4,
    cpu: [4000 * k, 0, 0, 0, 0, 0, 0, 0].map((x, i) => (i === 3 ? 4000 * k : x)), // 50 % busy host
    mem_total_kb: 1000,
    mem_available_kb: 250,
    procs: [
      { pid: 4242, name: "python", cpu_jiffies: 1000 * k, rss_kb: 5000, threads: 9, voluntary_ctxt_switches: 10, nonvoluntary_ctxt_switches: 200 * k, fds: 990, fd_limit: 1024 },
    ],
  };
}

beforeAll(async () => {
  b = new RunBuilder().meta({ run_name: "host", start_ts: H });
  // partitions 20261201_20 (k = 0..59) and 20261201_21 (k = 60..99), plus a torn last line
  for (let k = 0; k < 100; k++) b.raw(`host/${k < 60 ? "20261201_20" : "20261201_21"}.jsonl`, `${JSON.stringify(record(k))}\n`);
  b.raw("host/20261201_21.jsonl", '{"ts": 1');
  server = await setupTestServer({ dumpDetails: b.runDir });
});
afterAll(() => fs.rmSync(b.runDir, { recursive: true, force: true }));

const call = async (url: string) => {
  const { status, body } = await callJson(GET, url, { token: server.token });
  return { status, body };
};

describe("GET /api/timeline/host", () => {
  test("per node: CPU and memory derived from cumulative counters, processes at % of a core, fd headroom, the advisories", async () => {
    const { status, body } = await call(`/api/timeline/host?t0=${H + 3000}&t1=${H + 3095}`);
    expect(status).toBe(200);
    const r = GetHostResponse.parse(body);
    expect(r.nodes).toHaveLength(1);
    const n = r.nodes[0]!;
    expect(n).toMatchObject({ node: "10.0.0.2", ncpu: 4, mem_total_kb: 1000 });
    expect(n.series.map((p) => p.ts)).toEqual(Array.from({ length: 10 }, (_, k) => H + 3000 + 10 * k));
    expect(n.series[0]).toEqual({ ts: H + 3000, cpu_pct: null, mem_used_pct: 75 });
    expect(n.series[1]!.cpu_pct).toBe(50);
    const p = n.procs[0]!;
    expect(p).toMatchObject({ pid: 4242, name: "python" });
    // 1000 jiffies per tick over 8000 host jiffies / 4 cores = 50 % of a core; 20 switches/s
    expect(p.points[1]).toEqual({ ts: H + 3010, cpu_core_pct: 50, rss_kb: 5000, nonvoluntary_per_s: 20, fds: 990, fd_limit: 1024, fd_headroom: 1 - 990 / 1024 });
    expect(r.advisories.map((a) => a.message)).toEqual([
      '10.0.0.2: process python (pid 4242) has 990 of 1024 file descriptors open (3% headroom): raise RLIMIT_NOFILE (ulimit -n) before it fails with "Too many open files".',
    ]);
  });

  test("without a window: the newest hour of host data; max_points strides", async () => {
    const { body } = await call("/api/timeline/host?max_points=5");
    const n = GetHostResponse.parse(body).nodes[0]!;
    expect(n.series).toHaveLength(5);
    expect(n.series.at(-1)!.ts).toBe(H + 3000 + 990);
    expect(n.series[0]!.ts).toBeGreaterThanOrEqual(H + 3990 - 3600);
  });

  test("the host rule reaches GET /api/advisory", async () => {
    const res = await callJson<{ advisories: { level: string; message: string }[] }>(advisoryGET, "/api/advisory", { token: server.token });
    expect(res.status).toBe(200);
    expect(res.body.advisories).toContainEqual({
      level: "warning",
      message: '10.0.0.2: process python (pid 4242) has 990 of 1024 file descriptors open (3% headroom): raise RLIMIT_NOFILE (ulimit -n) before it fails with "Too many open files".',
    });
  });

  test("window rules and an empty run", async () => {
    expect((await call(`/api/timeline/host?t0=${H}&t1=${H + 20000}`)).status).toBe(400);
    fs.rmSync(path.join(b.dash, "host"), { recursive: true, force: true });
    expect(GetHostResponse.parse((await call("/api/timeline/host")).body)).toEqual({ nodes: [], advisories: [] });
  });
});
