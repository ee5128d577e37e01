import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pyFloat } from "@/lib/store/format";
import type { GpuSample, PhaseEvent, TopologySnapshot, TrajectoryEvent } from "@/lib/store/format";
import { RunWriter } from "./run-writer";
import type { WriterLog } from "./run-writer";
import { nodeWriterFs } from "./writer-fs";
import type { WriterFs } from "./writer-fs";

let dump: string;
let dash: string;
beforeEach(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-writer-"));
  dash = join(dump, "dashboard");
});
afterEach(() => rmSync(dump, { recursive: true, force: true }));

function captureLog(): WriterLog & { errors: string[]; warns: string[] } {
  const errors: string[] = [];
  const warns: string[] = [];
  return {
    errors,
    warns,
    error: (m, e) => errors.push(`${m} ${e instanceof Error ? e.message : ""}`),
    warn: (m) => warns.push(m),
  };
}

/** Real fs where writes to paths matching `failing` throw EIO while `failing.on` is set. */
function eioFs(pattern: RegExp): WriterFs & { on: boolean; order: string[] } {
  const fs = {
    on: true,
    order: [] as string[],
    ...nodeWriterFs,
    async openAppend(path: string) {
      fs.order.push(path.slice(path.indexOf("dashboard/") + 10));
      if (fs.on && pattern.test(path)) throw Object.assign(new Error(`EIO: i/o error, open '${path}'`), { code: "EIO" });
      return nodeWriterFs.openAppend(path);
    },
  };
  return fs;
}

const gpu = (ts: number, g = 0): GpuSample => ({ ts, node: "10.0.0.1", gpu: g, util: 50, mem_mb: 1000, power_w: 300 });
const phase = (t0: number, t1: number): PhaseEvent => ({ name: "actor_train", t0, t1, node: "10.0.0.2", gpus: [3], rank: 3, role: "train" });

describe("RunWriter", () => {
  it("writes meta.json at open, keeps earlier args on reopen, and flushes streams in the spec order", async () => {
    const fs = eioFs(/$^/);
    const w = await RunWriter.open({ dashDir: dash, fs, meta: { run_name: "r", start_ts: 1000, args: { colocate: true } } });
    expect(readFileSync(join(dash, "meta.json"), "utf8")).toBe(
      '{\n "run_name": "r",\n "start_ts": 1000.0,\n "args": {\n  "colocate": true\n },\n "schema_version": 1\n}',
    );
    w.add("data_buffer", [{ ts: 5, length: 2 }]);
    w.add("gpu_util", [gpu(5)]);
    w.add("phases", [phase(1, 2)]);
    w.add("metrics", [{ ts: 3, step_key: "rollout/step", step: 0, metrics: { "perf/step_time": pyFloat(95), "rollout/step": 0 } }]);
    const rep = await w.flush();
    expect(rep).toMatchObject({ ok: true, written: 4 });
    expect(fs.order).toEqual(["metrics.jsonl", "phases/19700101_00.jsonl", "gpu_util/19700101_00.jsonl", "data_buffer.jsonl"]);
    expect(readFileSync(join(dash, "metrics.jsonl"), "utf8")).toBe(
      '{"ts":3.0,"step_key":"rollout/step","step":0,"metrics":{"perf/step_time":95.0,"rollout/step":0}}\n',
    );
    expect(readFileSync(join(dash, "lane_catalog.json"), "utf8")).toBe(
      '{"version": 1, "lanes": {"10.0.0.2:3": {"ranks": [3], "engine_addrs": [], "roles": ["train"]}, "10.0.0.1:0": {"ranks": [], "engine_addrs": [], "roles": []}}}',
    );
    expect(existsSync(join(dash, "lane_catalog.json.tmp"))).toBe(false);

    const w2 = await RunWriter.open({ dashDir: dash, meta: { run_name: "r2", start_ts: 2000.5 } });
    expect(readFileSync(join(dash, "meta.json"), "utf8")).toContain('"start_ts": 2000.5,\n "args": {\n  "colocate": true');
    // The existing catalog is merged, not replaced.
    w2.add("gpu_util", [gpu(6, 1)]);
    await w2.flush();
    expect(readFileSync(join(dash, "lane_catalog.json"), "utf8")).toContain('"10.0.0.2:3"');
    expect(readFileSync(join(dash, "lane_catalog.json"), "utf8")).toContain('"10.0.0.1:1"');
  });

  it("does not create stream files for empty streams nor a catalog before the first lane", async () => {
    const w = await RunWriter.open({ dashDir: dash, meta: { run_name: "r", start_ts: 1 } });
    w.add("metrics", [{ ts: 1, step_key: null, step: null, metrics: {} }]);
    await w.flush();
    expect(readdirSync(dash).sort()).toEqual(["meta.json", "metrics.jsonl"]);
  });

  it("logs every failed attempt at error level, keeps the records and writes them once the disk recovers", async () => {
    const fs = eioFs(/gpu_util/);
    const log = captureLog();
    const w = await RunWriter.open({ dashDir: dash, fs, log });
    w.add("gpu_util", [gpu(1), gpu(2)]);
    w.add("phases", [phase(1, 2)]);
    const r1 = await w.flush();
    expect(r1.ok).toBe(false);
    expect(w.healthy).toBe(false);
    expect(readFileSync(join(dash, "phases/19700101_00.jsonl"), "utf8").split("\n")).toHaveLength(2);
    w.add("gpu_util", [gpu(3)]);
    await w.flush();
    expect(log.errors.filter((e) => e.includes("write failed") && e.includes("EIO"))).toHaveLength(2);
    expect(w.pending("gpu_util")).toBe(3);
    expect(w.stats.gpu_util.writeErrors).toBe(2);
    fs.on = false;
    expect((await w.flush()).ok).toBe(true);
    const lines = readFileSync(join(dash, "gpu_util/19700101_00.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as GpuSample).ts)).toEqual([1, 2, 3]);
    expect(w.stats.gpu_util).toMatchObject({ received: 3, written: 3, dropped: 0 });
  });

  it("bounds each stream's buffer by dropping the oldest 10 % and reports the drops at the next flush", async () => {
    const fs = eioFs(/gpu_util/);
    const log = captureLog();
    const w = await RunWriter.open({ dashDir: dash, fs, log, maxBufferedPerStream: 100 });
    w.add("gpu_util", Array.from({ length: 100 }, (_, i) => gpu(i)));
    expect(w.add("gpu_util", [gpu(100)]).dropped).toBe(10);
    expect(w.pending("gpu_util")).toBe(91);
    await w.flush();
    expect(log.errors.some((e) => e.startsWith("dropped 10 buffered records"))).toBe(true);
    fs.on = false;
    await w.flush();
    const lines = readFileSync(join(dash, "gpu_util/19700101_00.jsonl"), "utf8").trim().split("\n");
    expect((JSON.parse(lines[0] as string) as GpuSample).ts).toBe(10);
    expect(w.stats.gpu_util.dropped).toBe(10);
  });

  it("rebuilds a corrupt lane catalog from the streams, then merges the new lanes (issue #11.14)", async () => {
    const topo = (ts: number): TopologySnapshot => ({
      ts,
      engines: [{ addr: "http://10.0.0.1:15000", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 1]], gpu_uuids: [null] }],
    });
    const w = await RunWriter.open({ dashDir: dash, meta: { run_name: "r", start_ts: 1 } });
    // Two hours of phases (incl. a rollout-manager phase, which adds no lane), topology, gpu samples.
    w.add("phases", [phase(1, 2), { ...phase(3600, 3700), gpus: [4], rank: 4 }, { ...phase(5, 6), role: "rollout_manager", node: "10.0.0.9", gpus: [0], rank: -1 }]);
    w.add("topology", [topo(3)]);
    w.add("gpu_util", [gpu(1, 0), gpu(1, 1), gpu(3700, 7)]);
    await w.flush();
    const before = readFileSync(join(dash, "lane_catalog.json"), "utf8");
    expect(before).toBe(
      '{"version": 1, "lanes": {"10.0.0.2:3": {"ranks": [3], "engine_addrs": [], "roles": ["train"]}, ' +
        '"10.0.0.2:4": {"ranks": [4], "engine_addrs": [], "roles": ["train"]}, ' +
        '"10.0.0.1:1": {"ranks": [], "engine_addrs": ["http://10.0.0.1:15000"], "roles": ["rollout"]}, ' +
        '"10.0.0.1:0": {"ranks": [], "engine_addrs": [], "roles": []}, ' +
        '"10.0.0.1:7": {"ranks": [], "engine_addrs": [], "roles": []}}}',
    );
    // A torn/corrupt catalog, and a garbage line in a stream (skipped by the rebuild).
    writeFileSync(join(dash, "lane_catalog.json"), before.slice(0, 40));
    appendFileSync(join(dash, "gpu_util/19700101_00.jsonl"), "{garbage\n");

    const log = captureLog();
    const w2 = await RunWriter.open({ dashDir: dash, log });
    w2.add("gpu_util", [gpu(10, 5)]);
    expect((await w2.flush()).ok).toBe(true);
    expect(log.errors.some((e) => e.includes("lane_catalog.json is corrupt; rebuilding it from the streams"))).toBe(true);
    expect(readFileSync(join(dash, "lane_catalog.json"), "utf8")).toBe(before.slice(0, -2) + ', "10.0.0.1:5": {"ranks": [], "engine_addrs": [], "roles": []}}}');
  });

  it("rebuilds a missing lane catalog from existing streams instead of starting one with only the new lanes", async () => {
    const w = await RunWriter.open({ dashDir: dash });
    w.add("gpu_util", [gpu(1, 0)]);
    w.add("phases", [phase(1, 2)]);
    await w.flush();
    rmSync(join(dash, "lane_catalog.json"));
    const log = captureLog();
    const w2 = await RunWriter.open({ dashDir: dash, log });
    w2.add("gpu_util", [gpu(2, 1)]);
    await w2.flush();
    expect(log.warns).toEqual(["lane_catalog.json is missing but streams exist; rebuilding it from the streams"]);
    expect(Object.keys((JSON.parse(readFileSync(join(dash, "lane_catalog.json"), "utf8")) as { lanes: object }).lanes)).toEqual([
      "10.0.0.2:3",
      "10.0.0.1:0",
      "10.0.0.1:1",
    ]);
  });

  it("keeps the lines of a write torn by ENOSPC, retries only the rest, and never duplicates or leaves a torn line", async () => {
    // The first attempt lands 100 bytes and then fails like a full disk; the next ones fail outright.
    let budget = 100;
    let full = true;
    const fs: WriterFs = {
      ...nodeWriterFs,
      async openAppend(path) {
        const fh = await nodeWriterFs.openAppend(path);
        return {
          read: fh.read.bind(fh),
          stat: fh.stat.bind(fh),
          truncate: fh.truncate.bind(fh),
          sync: fh.sync.bind(fh),
          close: fh.close.bind(fh),
          async write(buf: Uint8Array, off: number, len: number, pos: number | null) {
            if (!full) return fh.write(buf, off, len, pos);
            if (budget === 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
            const n = Math.min(len, budget);
            budget -= n;
            return fh.write(buf, off, n, pos);
          },
        };
      },
    };
    const log = captureLog();
    const w = await RunWriter.open({ dashDir: dash, fs, log });
    w.add("gpu_util", Array.from({ length: 10 }, (_, i) => gpu(i)));
    const r1 = await w.flush();
    expect(r1.ok).toBe(false);
    expect(r1.written).toBe(1); // one whole 75-byte line landed, the 25 torn bytes after it were cut
    const file = join(dash, "gpu_util/19700101_00.jsonl");
    expect(readFileSync(file, "utf8")).toBe('{"ts":0.0,"node":"10.0.0.1","gpu":0,"util":50,"mem_mb":1000,"power_w":300}\n');
    expect(w.pending("gpu_util")).toBe(9);
    expect(w.pendingBytes()).toBe(9 * 75);
    w.add("gpu_util", [gpu(10)]);
    await w.flush();
    expect(log.errors.filter((e) => e.includes("write failed") && e.includes("ENOSPC"))).toHaveLength(2);
    full = false;
    expect((await w.flush()).ok).toBe(true);
    const ts = readFileSync(file, "utf8").split("\n").slice(0, -1).map((l) => (JSON.parse(l) as GpuSample).ts);
    expect(ts).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(w.stats.gpu_util).toMatchObject({ received: 11, written: 11, dropped: 0, writeErrors: 2 });
    expect(w.pendingBytes()).toBe(0);
  });

  it("caps buffered bytes: 40 records of 10 MB on a failing disk stay under 256 MB, oldest dropped and counted (issue #11.11)", async () => {
    const fs = eioFs(/trajectories/);
    const log = captureLog();
    const w = await RunWriter.open({ dashDir: dash, fs, log });
    expect(w.maxBufferedBytes).toBe(256 * 1024 * 1024);
    const detail = "x".repeat(10 * 1024 * 1024);
    const ev = (i: number): TrajectoryEvent => ({ ts: i, kind: "gen_end", sample_index: i, group_index: 0, turn: 0, weight_version: "", detail });
    let maxSeen = 0;
    for (let i = 0; i < 40; i++) {
      w.add("trajectories", [ev(i)]);
      maxSeen = Math.max(maxSeen, w.pendingBytes());
      if (i % 8 === 7) await w.flush(); // failing flushes in between, like the collector's interval
    }
    expect(maxSeen).toBeLessThanOrEqual(w.maxBufferedBytes);
    const bytesOf = (from: number, to: number): number => {
      let n = 0;
      for (let i = from; i < to; i++) n += w.lineBytes("trajectories", ev(i));
      return n;
    };
    const kept = w.pending("trajectories");
    expect(kept).toBeGreaterThanOrEqual(22); // 90 % of the cap is ~23 records
    expect(w.pendingBytes()).toBe(bytesOf(40 - kept, 40));
    expect(w.stats.trajectories.dropped).toBe(40 - kept);
    expect(w.stats.trajectories.droppedBytes).toBe(bytesOf(0, 40 - kept));
    await w.flush();
    expect(log.errors.some((e) => /^dropped \d+ buffered records \(\d+ bytes\) to stay within the buffer caps/.test(e))).toBe(true);
    fs.on = false;
    expect((await w.flush()).ok).toBe(true);
    // The newest records survived, in order.
    const written = readFileSync(join(dash, "trajectories/19700101_00.jsonl"), "utf8").split("\n").slice(0, -1);
    expect(written.map((l) => (JSON.parse(l) as TrajectoryEvent).sample_index)).toEqual(Array.from({ length: kept }, (_, k) => 40 - kept + k));
  }, 60_000);

  it("refuses a record larger than maxRecordBytes and says which and how large", async () => {
    const w = await RunWriter.open({ dashDir: dash, maxRecordBytes: 1000 });
    const ok = { ts: 1, step_key: null, step: null, metrics: { s: "a".repeat(100) } };
    const big = { ts: 2, step_key: null, step: null, metrics: { s: "a".repeat(1000) } };
    const res = w.add("metrics", [ok, big, ok]);
    expect(res).toEqual({ dropped: 0, refused: [{ index: 1, bytes: w.lineBytes("metrics", big) }] });
    expect(w.lineBytes("metrics", big)).toBe(1058); // the line and its newline
    expect(w.pending("metrics")).toBe(2);
    expect(w.stats.metrics).toMatchObject({ received: 2, tooLarge: 1 });
  });

  it("serializes concurrent flushes", async () => {
    const w = await RunWriter.open({ dashDir: dash });
    w.add("data_buffer", [{ ts: 1, length: 1 }]);
    const a = w.flush();
    w.add("data_buffer", [{ ts: 2, length: 2 }]);
    const b = w.flush();
    await Promise.all([a, b]);
    expect(readFileSync(join(dash, "data_buffer.jsonl"), "utf8")).toBe('{"ts":1.0,"length":1}\n{"ts":2.0,"length":2}\n');
  });
});
