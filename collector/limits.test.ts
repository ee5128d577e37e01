/**
 * Ingest limits (issue #11 items 11, 12): records stamped far from the
 * collector's clock get a 400 naming the field; a record over the per-record
 * limit gets a 413 naming the limit and its flag; the buffers are capped in
 * bytes while the disk fails, with the drops counted in /metrics and logged.
 * In every case the valid rest of the batch is kept.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeWriterFs } from "@/lib/store/writer/writer-fs";
import type { WriterFs } from "@/lib/store/writer/writer-fs";
import { ConfigError, parseCollectorArgs } from "./env";
import { startCollector } from "./server";
import type { CollectorHandle, CollectorOptions } from "./server";
import { captureLog } from "./testing/capture-log";
import type { CapturedLog } from "./testing/capture-log";
import { spawnCollector } from "./testing/child-collector";
import { getText, postJson } from "./testing/http";

const NOW = 1764600000.5; // 2025-12-01T14:40:00.5Z
let dump: string;
let c: CollectorHandle | undefined;
let log: CapturedLog;
beforeEach(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-limits-"));
  log = captureLog();
});
afterEach(async () => {
  await c?.stop();
  c = undefined;
  rmSync(dump, { recursive: true, force: true });
});

async function start(over: Partial<CollectorOptions> = {}): Promise<CollectorHandle> {
  c = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log, now: () => NOW, ...over });
  return c;
}

const gpu = (ts: number) => ({ ts, node: "10.0.0.1", gpu: 0, util: 87, mem_mb: 61234, power_w: 612 });
const phase = (t0: number, t1: number) => ({ name: "actor_train", t0, t1, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" });
const traj = (i: number, detail: string) => ({ ts: NOW + i, kind: "gen_end", sample_index: i, group_index: 0, turn: 0, weight_version: "", detail });
const metricLines = (text: string, name: string): string[] => text.split("\n").filter((l) => l.startsWith(name));

describe("timestamps far from the collector clock", () => {
  it("refuse a year-9999 record with a 400 naming the field, and keep the rest of the batch", async () => {
    const h = await start();
    const r = await postJson(`${h.url}/v1/gpu`, { records: [gpu(NOW - 5), gpu(253402300799), gpu(NOW + 5)] });
    expect(r).toEqual({
      status: 400,
      json: {
        error: { code: "bad_request", message: "records[1].ts: 253402300799 is more than 1 day from the collector clock (1764600000.500)" },
        accepted: 2,
        rejected: 1,
      },
    });
    await h.flush();
    const lines = readFileSync(join(h.dashDir, "gpu_util/20251201_14.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { ts: number }).ts)).toEqual([NOW - 5, NOW + 5]);
    expect(metricLines((await getText(`${h.url}/metrics`)).text, 'rlboard_collector_records_rejected_total{stream="gpu_util"}')).toEqual([
      'rlboard_collector_records_rejected_total{stream="gpu_util"} 1',
    ]);
  });

  it("checks t0 and a closed t1 of phases (not the -1.0 of an OPEN marker), metrics' ts in the past, and the first bad index wins", async () => {
    const h = await start();
    const day = 86_400;
    const r = await postJson(`${h.url}/v1/phases`, {
      records: [phase(NOW - 10, -1.0), phase(NOW - 10, NOW + day + 1), phase(NOW - day - 1, NOW), phase(NOW - day + 1, NOW)],
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ accepted: 2, rejected: 2 });
    expect((r.json.error as { message: string }).message).toBe(
      `records[1].t1: ${NOW + day + 1} is more than 1 day from the collector clock (1764600000.500)`,
    );
    const m = await postJson(`${h.url}/v1/metrics`, {
      records: [{ ts: 1755000000, step_key: null, step: null, metrics: {} }, { ts: "x", step_key: null, step: null, metrics: {} }],
    });
    expect(m.json).toMatchObject({ error: { message: "records[0].ts: 1755000000 is more than 1 day from the collector clock (1764600000.500)" } });
  });

  it("accept any time with maxClockSkewS 0 (--max-clock-skew 0)", async () => {
    const h = await start({ maxClockSkewS: 0 });
    expect(await postJson(`${h.url}/v1/gpu`, { records: [gpu(1000), gpu(253402300799)] })).toEqual({ status: 200, json: { accepted: 2 } });
  });
});

describe("size limits", () => {
  it("answers 413 naming the per-record limit (default 16 MiB) and keeps the valid records; bodies over --max-body-mb (default 32) get 413 too", async () => {
    const h = await start();
    const big = traj(1, "x".repeat(17 * 1024 * 1024));
    const r = await postJson(`${h.url}/v1/trajectories`, { records: [traj(0, "ok"), big] });
    const bytes = h.writer.lineBytes("trajectories", big as never);
    expect(r).toEqual({
      status: 413,
      json: {
        error: { code: "payload_too_large", message: `records[1]: ${bytes} bytes as a line exceeds the per-record limit of 16777216 bytes (--max-record-mb)` },
        accepted: 1,
        rejected: 1,
      },
    });
    expect(h.writer.pending("trajectories")).toBe(1);
    const body = await postJson(`${h.url}/v1/trajectories`, { records: [traj(2, "y".repeat(33 * 1024 * 1024))] });
    expect(body).toEqual({ status: 413, json: { error: { code: "payload_too_large", message: "request body exceeds 33554432 bytes (--max-body-mb)" } } });
    const text = (await getText(`${h.url}/metrics`)).text;
    expect(metricLines(text, 'rlboard_collector_ingest_requests_total{outcome="too_large"}')).toEqual([
      'rlboard_collector_ingest_requests_total{outcome="too_large"} 2',
    ]);
  }, 30_000);

  it("a metrics record refused for its size moves no forwarded gauge", async () => {
    const h = await start({ maxRecordBytes: 4096, maxBodyBytes: 65536 });
    const ok = { ts: NOW, step_key: "rollout/step", step: 1, metrics: { "rollout/rewards_mean": 0.25 } };
    const big = { ts: NOW + 1, step_key: "rollout/step", step: 2, metrics: { "rollout/rewards_mean": 0.75, pad: "p".repeat(8192) } };
    const r = await postJson(`${h.url}/v1/metrics`, { records: [ok, big] });
    expect(r.status).toBe(413);
    const text = (await getText(`${h.url}/metrics`)).text;
    expect(metricLines(text, "miles_metric_rollout_rewards_mean")).toEqual(['miles_metric_rollout_rewards_mean{run_name="miles-run"} 0.25']);
  });

  it("refuses an oversized topology snapshot before it reaches the topology tracker", async () => {
    const h = await start({ maxRecordBytes: 400 });
    const eng = (addr: string) => ({ addr, worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 0]], gpu_uuids: [null] });
    const r = await postJson(`${h.url}/v1/topology`, {
      records: [{ ts: NOW, engines: [eng("http://a:1")] }, { ts: NOW + 1, engines: [1, 2, 3, 4].map((i) => eng(`http://b:${i}`)) }],
    });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ accepted: 1, rejected: 1 });
    await h.flush();
    expect(readFileSync(join(h.dashDir, "topology.jsonl"), "utf8")).not.toContain("http://b:");
  });

  it("caps buffered bytes while writes fail: oldest dropped, counted in /metrics and logged at the next flush", async () => {
    let failing = true;
    const fs: WriterFs = {
      ...nodeWriterFs,
      openAppend: async (path) => {
        if (failing) throw Object.assign(new Error(`ENOSPC: no space left on device, open '${path}'`), { code: "ENOSPC" });
        return nodeWriterFs.openAppend(path);
      },
    };
    const cap = 16 * 1024 * 1024;
    const h = await start({ fs, maxBufferedBytes: cap, flushBatch: 1_000_000 });
    const detail = "z".repeat(1024 * 1024);
    let maxBuffered = 0;
    for (let i = 0; i < 40; i++) {
      expect((await postJson(`${h.url}/v1/trajectories`, { records: [traj(i, detail)] })).status).toBe(200);
      maxBuffered = Math.max(maxBuffered, h.writer.pendingBytes());
      if (i % 10 === 9) await h.flush();
    }
    expect(maxBuffered).toBeLessThanOrEqual(cap);
    const kept = h.writer.pending("trajectories");
    const text = (await getText(`${h.url}/metrics`)).text;
    const bytesOf = (from: number, to: number): number => {
      let n = 0;
      for (let i = from; i < to; i++) n += h.writer.lineBytes("trajectories", traj(i, detail) as never);
      return n;
    };
    expect(metricLines(text, 'rlboard_collector_records_dropped_total{stream="trajectories"}')).toEqual([
      `rlboard_collector_records_dropped_total{stream="trajectories"} ${40 - kept}`,
    ]);
    expect(metricLines(text, 'rlboard_collector_dropped_bytes_total{stream="trajectories"}')).toEqual([
      `rlboard_collector_dropped_bytes_total{stream="trajectories"} ${bytesOf(0, 40 - kept)}`,
    ]);
    expect(metricLines(text, "rlboard_collector_buffered_bytes ")).toEqual([`rlboard_collector_buffered_bytes ${bytesOf(40 - kept, 40)}`]);
    expect(metricLines(text, "rlboard_collector_buffer_limit_bytes ")).toEqual([`rlboard_collector_buffer_limit_bytes ${cap}`]);
    expect(log.messages("error").some((m) => /^dropped \d+ buffered records \(\d+ bytes\) to stay within the buffer caps/.test(m))).toBe(true);
    failing = false;
    await h.flush();
    const written = readFileSync(join(h.dashDir, `trajectories/20251201_14.jsonl`), "utf8").trim().split("\n");
    expect(written.map((l) => (JSON.parse(l) as { sample_index: number }).sample_index)).toEqual(Array.from({ length: kept }, (_, k) => 40 - kept + k));
  }, 30_000);
});

describe("limit flags", () => {
  const parse = (argv: string[]) => parseCollectorArgs(["--dump-details", "d", "--node", "n", ...argv], {});
  it("default to 256 MiB buffered, 16 MiB per record, a body of twice that, 1 day of clock skew", () => {
    expect(parse([])).toMatchObject({ maxBufferMb: 256, maxRecordMb: 16, maxBodyMb: 32, maxClockSkewS: 86400 });
    expect(parse(["--max-record-mb", "4"])).toMatchObject({ maxRecordMb: 4, maxBodyMb: 8 });
    expect(parse(["--max-body-mb", "20", "--max-buffer-mb", "64", "--max-clock-skew", "0"])).toMatchObject({
      maxBodyMb: 20,
      maxBufferMb: 64,
      maxClockSkewS: 0,
    });
  });

  it("refuse incoherent limits with one line", () => {
    expect(() => parse(["--max-body-mb", "8"])).toThrow(new ConfigError("--max-body-mb (8) must be at least --max-record-mb (16): a request must fit one record at the limit"));
    expect(() => parse(["--max-buffer-mb", "8"])).toThrow(new ConfigError("--max-record-mb (16) must not exceed --max-buffer-mb (8)"));
    expect(() => parse(["--max-clock-skew=-1"])).toThrow(new ConfigError("--max-clock-skew must be >= 0"));
    expect(() => parse(["--max-buffer-mb", "0"])).toThrow(new ConfigError("--max-buffer-mb must be > 0"));
  });

  it("reach the daemon from the command line", async () => {
    const child = await spawnCollector(["--dump-details", dump, "--gpu-source", "none", "--max-record-mb", "1", "--max-buffer-mb", "8"]);
    try {
      const now = Date.now() / 1000; // the child runs on the real clock
      const r = await postJson(`${child.url}/v1/trajectories`, { records: [{ ...traj(0, "x".repeat(1024 * 1024)), ts: now }] });
      expect(r.status).toBe(413);
      expect((r.json.error as { message: string }).message).toMatch(/exceeds the per-record limit of 1048576 bytes \(--max-record-mb\)$/);
      expect((await postJson(`${child.url}/v1/gpu`, { records: [gpu(now), gpu(now + 2 * 86_400)] })).json).toMatchObject({ accepted: 1, rejected: 1 });
      expect(metricLines((await getText(`${child.url}/metrics`)).text, "rlboard_collector_buffer_limit_bytes ")).toEqual([
        "rlboard_collector_buffer_limit_bytes 8388608",
      ]);
    } finally {
      child.proc.kill("SIGTERM");
      await child.exited;
    }
  }, 30_000);
});
