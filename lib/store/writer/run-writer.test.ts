import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pyFloat } from "./python-json";
import type { GpuSample, PhaseEvent } from "./records";
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
    expect(w.add("gpu_util", [gpu(100)])).toBe(10);
    expect(w.pending("gpu_util")).toBe(91);
    await w.flush();
    expect(log.errors.some((e) => e.startsWith("dropped 10 buffered records"))).toBe(true);
    fs.on = false;
    await w.flush();
    const lines = readFileSync(join(dash, "gpu_util/19700101_00.jsonl"), "utf8").trim().split("\n");
    expect((JSON.parse(lines[0] as string) as GpuSample).ts).toBe(10);
    expect(w.stats.gpu_util.dropped).toBe(10);
  });

  it("starts a new lane catalog when the existing one is corrupt", async () => {
    writeFileSync(join(dump, "x"), "");
    const log = captureLog();
    const w = await RunWriter.open({ dashDir: dash, log });
    writeFileSync(join(dash, "lane_catalog.json"), "{not json");
    w.add("gpu_util", [gpu(1)]);
    await w.flush();
    expect(log.errors.some((e) => e.includes("corrupt"))).toBe(true);
    expect(readFileSync(join(dash, "lane_catalog.json"), "utf8")).toContain('"10.0.0.1:0"');
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
