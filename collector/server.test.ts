import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeWriterFs } from "@/lib/store/writer/writer-fs";
import type { WriterFs } from "@/lib/store/writer/writer-fs";
import { startCollector } from "./server";
import type { CollectorHandle, CollectorOptions } from "./server";
import { captureLog } from "./testing/capture-log";
import type { CapturedLog } from "./testing/capture-log";
import { getText, postJson } from "./testing/http";

let dump: string;
let c: CollectorHandle | undefined;
let log: CapturedLog;
beforeEach(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-coll-"));
  log = captureLog();
});
afterEach(async () => {
  await c?.stop();
  c = undefined;
  rmSync(dump, { recursive: true, force: true });
});

async function start(over: Partial<CollectorOptions> = {}): Promise<CollectorHandle> {
  c = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log, now: () => 1755000000.25, ...over });
  return c;
}

const phase = { name: "actor_train", t0: 1755000081.2, t1: 1755000120.7, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" };

describe("ingest HTTP", () => {
  it("accepts a batch, writes it at flush, and answers with the accepted count", async () => {
    const h = await start();
    const r = await postJson(`${h.url}/v1/phases`, { records: [phase, { ...phase, t1: -1.0 }] });
    expect(r).toEqual({ status: 200, json: { accepted: 2 } });
    await h.flush();
    expect(readFileSync(join(h.dashDir, "phases/20250812_12.jsonl"), "utf8")).toBe(
      '{"name":"actor_train","t0":1755000081.2,"t1":1755000120.7,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}\n' +
        '{"name":"actor_train","t0":1755000081.2,"t1":-1.0,"node":"10.0.0.2","gpus":[3],"rank":3,"role":"train"}\n',
    );
    expect(readFileSync(join(h.dashDir, "meta.json"), "utf8")).toBe(
      '{\n "run_name": "miles-run",\n "start_ts": 1755000000.25,\n "args": {},\n "schema_version": 1\n}',
    );
  });

  it("keeps the valid part of a batch and names the first bad record's index and field", async () => {
    const h = await start();
    const bad = { ...phase, t0: "soon" };
    const r = await postJson(`${h.url}/v1/phases`, { records: [phase, phase, phase, bad, { ...phase, extra: 1 }] });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: { code: "bad_request", message: "records[3].t0: expected number, received string" },
      accepted: 3,
      rejected: 2,
    });
    await h.flush();
    expect(readFileSync(join(h.dashDir, "phases/20250812_12.jsonl"), "utf8").trim().split("\n")).toHaveLength(3);
    const m = await getText(`${h.url}/metrics`);
    expect(m.text).toContain('rlboard_collector_records_rejected_total{stream="phases"} 2');
    expect(m.text).toContain('rlboard_collector_records_written_total{stream="phases"} 3');
  });

  it("refuses GPU samples whose values the store's columns cannot hold as given", async () => {
    const h = await start();
    const ok = { ts: 1755000041.5, node: "10.0.0.1", gpu: 0, util: 87, mem_mb: 61234, power_w: 612 };
    const bad = [
      { ...ok, util: 300 },
      { ...ok, util: -1 },
      { ...ok, power_w: 40000 },
      { ...ok, mem_mb: 3_000_000_000 },
    ];
    for (const [i, b] of bad.entries()) {
      const r = await postJson(`${h.url}/v1/gpu_util`, { records: [ok, b] });
      expect(r.status, JSON.stringify(b)).toBe(400);
      expect((r.json as { error: { message: string } }).error.message, JSON.stringify(b)).toMatch(/^records\[1\]\.(util|power_w|mem_mb): /);
      expect((r.json as { accepted: number }).accepted, `case ${i}`).toBe(1);
    }
    const edge = { ...ok, util: 255, mem_mb: -2147483648, power_w: 32767 };
    expect((await postJson(`${h.url}/v1/gpu_util`, { records: [edge] })).status).toBe(200);
  });

  it("keeps metric value types from the JSON text (95.0 stays a float, NaN accepted) and key order", async () => {
    const h = await start();
    const body =
      '{"records":[{"ts":1755000161.5,"step_key":"train/step","step":96,"metrics":{"train/loss":NaN,"perf/step_time":95.0,"train/step":96,"1":true,"name":"\\u00e9"}}]}';
    expect((await postJson(`${h.url}/v1/metrics`, body)).status).toBe(200);
    await h.flush();
    expect(readFileSync(join(h.dashDir, "metrics.jsonl"), "utf8")).toBe(
      '{"ts":1755000161.5,"step_key":"train/step","step":96,"metrics":{"train/loss":NaN,"perf/step_time":95.0,"train/step":96,"1":true,"name":"\\u00e9"}}\n',
    );
  });

  it("accepts NaN engine samples and the gpu/engine route aliases, exposing latest values on /metrics", async () => {
    const h = await start();
    const eng = { ts: 1755000103.0, addr: "http://10.0.0.1:15000", metric: "sglang_token_usage", labels: { engine_type: "prefill" }, value: 0.63 };
    expect((await postJson(`${h.url}/v1/engine`, `{"records":[${JSON.stringify(eng)},${JSON.stringify({ ...eng, metric: "x" }).replace("0.63", "NaN")}]}`)).status).toBe(200);
    const gpu = { ts: 1755000041.123456, node: "10.0.0.1", gpu: 0, util: 87, mem_mb: 61234, power_w: 612 };
    expect((await postJson(`${h.url}/v1/gpu`, { records: [gpu] })).status).toBe(200);
    const m = (await getText(`${h.url}/metrics`)).text;
    expect(m).toContain('rlboard_engine_metric{engine="http://10.0.0.1:15000",metric="sglang_token_usage",engine_type="prefill",run_name="miles-run"} 0.63');
    expect(m).toContain('metric="x",engine_type="prefill",run_name="miles-run"} NaN');
    expect(m).toContain('rlboard_gpu_util_percent{node="10.0.0.1",gpu="0",run_name="miles-run"} 87');
    expect(m).toContain('miles_metric_dashboard_gpu_10_0_0_1_0_util{run_name="miles-run"} 87');
    await h.flush();
    expect(readFileSync(join(h.dashDir, "gpu_util/20250812_12.jsonl"), "utf8")).toBe(
      '{"ts":1755000041.123456,"node":"10.0.0.1","gpu":0,"util":87,"mem_mb":61234,"power_w":612}\n',
    );
    expect(readFileSync(join(h.dashDir, "lane_catalog.json"), "utf8")).toBe(
      '{"version": 1, "lanes": {"10.0.0.1:0": {"ranks": [], "engine_addrs": [], "roles": []}}}',
    );
  });

  it("deduplicates topology snapshots and appends scraped-only engines as external", async () => {
    const h = await start();
    const eng = { addr: "http://10.0.0.1:15000", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 0]], gpu_uuids: [null] };
    await postJson(`${h.url}/v1/topology`, { records: [{ ts: 1755000030.5, engines: [eng] }, { ts: 1755000031.0, engines: [eng] }] });
    await postJson(`${h.url}/v1/engine_series`, {
      records: [{ ts: 1755000040.0, addr: "http://10.1.0.6:15000", metric: "sglang_num_running_reqs", labels: {}, value: 1 }],
    });
    await postJson(`${h.url}/v1/topology`, { records: [{ ts: 1755000050.0, engines: [eng] }] });
    await h.flush();
    const lines = readFileSync(join(h.dashDir, "topology.jsonl"), "utf8").trim().split("\n");
    expect(lines).toEqual([
      '{"ts":1755000030.5,"engines":[{"addr":"http://10.0.0.1:15000","worker_type":"regular","engine_rank":0,"gpus":[["10.0.0.1",0]],"gpu_uuids":[null]}]}',
      '{"ts":1755000050.0,"engines":[{"addr":"http://10.0.0.1:15000","worker_type":"regular","engine_rank":0,"gpus":[["10.0.0.1",0]],"gpu_uuids":[null]},{"addr":"http://10.1.0.6:15000","worker_type":"external","engine_rank":-1,"gpus":[],"gpu_uuids":[]}]}',
    ]);
  });

  it("POST /v1/meta rewrites meta.json keeping start_ts, arg order and float tags", async () => {
    const h = await start({ runName: "first" });
    const r = await postJson(`${h.url}/v1/meta`, '{"run_name":"qwen3-8b-grpo","args":{"wandb_group":"g","wandb_team":null,"colocate":true,"rollout_batch_size":32,"sglang_mem_fraction_static":0.7,"lr":1.0}}');
    expect(r.status).toBe(200);
    expect(readFileSync(join(h.dashDir, "meta.json"), "utf8")).toBe(
      '{\n "run_name": "qwen3-8b-grpo",\n "start_ts": 1755000000.25,\n "args": {\n  "wandb_group": "g",\n  "wandb_team": null,\n  "colocate": true,\n  "rollout_batch_size": 32,\n  "sglang_mem_fraction_static": 0.7,\n  "lr": 1.0\n },\n "schema_version": 1\n}',
    );
    expect((await postJson(`${h.url}/v1/meta`, { args: [] })).status).toBe(400);
    expect((await postJson(`${h.url}/v1/meta`, { args: {}, start_ts: 1 })).json).toMatchObject({ error: { code: "bad_request" } });
  });

  it("answers health, 404, 405, malformed bodies and oversized bodies with JSON errors", async () => {
    const h = await start({ maxBodyBytes: 1000 });
    const health = await fetch(`${h.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, dash_dir: h.dashDir, buffered: 0 });
    const nf = await fetch(`${h.url}/v2/nope`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toMatchObject({ error: { code: "not_found" } });
    expect((await fetch(`${h.url}/v1/phases`)).status).toBe(405);
    expect((await postJson(`${h.url}/v1/phases`, "{not json")).json).toMatchObject({ error: { code: "bad_request" } });
    expect((await postJson(`${h.url}/v1/phases`, { recs: [] })).status).toBe(400);
    const big = await postJson(`${h.url}/v1/phases`, { records: Array.from({ length: 50 }, () => phase) });
    expect(big).toEqual({ status: 413, json: { error: { code: "payload_too_large", message: "request body exceeds 1000 bytes (--max-body-mb)" } } });
    // Chunked upload without content-length is cut at the limit as well.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${h.url}/v1/phases`, { method: "POST" }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      for (let i = 0; i < 10; i++) req.write("x".repeat(500));
      req.end();
    });
    expect(status).toBe(413);
  });

  it("refuses a second collector on the same directory and recovers a stale lock", async () => {
    await start();
    await expect(startCollector({ runDir: dump, gpuSource: "none", log })).rejects.toThrow(/another collector \(pid \d+\)/);
    await c?.stop();
    c = undefined;
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(dump, "dashboard/.collector.lock"), "999999999\n");
    const h = await start();
    expect(log.messages("warn").some((w) => w.includes("stale lock of pid 999999999"))).toBe(true);
    await h.stop();
    c = undefined;
    expect(existsSync(join(dump, "dashboard/.collector.lock"))).toBe(false);
  });

  it("flushes early once flushBatch records are pending", async () => {
    const h = await start({ flushBatch: 64 });
    const recs = Array.from({ length: 64 }, (_, i) => ({ ts: 1755000000 + i, length: i }));
    await postJson(`${h.url}/v1/data_buffer`, { records: recs });
    for (let i = 0; i < 50 && !existsSync(join(h.dashDir, "data_buffer.jsonl")); i++) await new Promise((r) => setTimeout(r, 20));
    expect(readFileSync(join(h.dashDir, "data_buffer.jsonl"), "utf8").trim().split("\n")).toHaveLength(64);
  });

  it("logs a failing write at error level on every attempt, keeps serving, and writes everything once the disk recovers", async () => {
    let failing = true;
    const fs: WriterFs = {
      ...nodeWriterFs,
      openAppend: async (p) => {
        if (failing && p.includes("trajectories")) throw Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
        return nodeWriterFs.openAppend(p);
      },
    };
    const h = await start({ fs });
    const ev = { ts: 1755000200.0, kind: "attempt_start", sample_index: 96, group_index: 12, turn: -1, weight_version: "", detail: "" };
    await postJson(`${h.url}/v1/trajectories`, { records: [ev] });
    await h.flush();
    await h.flush();
    expect(log.messages("error").filter((e) => e.includes("write failed") && e.includes("EIO"))).toHaveLength(2);
    const health = await fetch(`${h.url}/health`);
    expect(health.status).toBe(503);
    expect((await getText(`${h.url}/metrics`)).text).toContain('rlboard_collector_write_errors_total{stream="trajectories"} 2');
    failing = false;
    const res = await h.stop();
    c = undefined;
    expect(res).toEqual({ ok: true, lost: 0 });
    expect(readdirSync(join(dump, "dashboard/trajectories"))).toEqual(["20250812_12.jsonl"]);
  });
});
