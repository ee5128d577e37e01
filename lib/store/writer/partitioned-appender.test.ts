import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hourKey, streamFile } from "@/lib/store/format";
import { MAX_WRITE_CHARS, PartitionedAppender } from "./partitioned-appender";
import type { PhaseEvent } from "@/lib/store/format";
import { nodeWriterFs } from "./writer-fs";
import type { WriterFs } from "./writer-fs";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rlb-append-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const phase = (t0: number, t1: number, name = "p"): PhaseEvent => ({ name, t0, t1, node: "n", gpus: [0], rank: 0, role: "train" });

/** Real fs that counts writes and can fail the next write after writing half of it. */
function instrumentedFs(): WriterFs & { writes: string[]; failNext: number } {
  const fs = {
    writes: [] as string[],
    failNext: 0,
    ...nodeWriterFs,
    async openAppend(path: string) {
      const fh = await nodeWriterFs.openAppend(path);
      return {
        read: fh.read.bind(fh),
        stat: fh.stat.bind(fh),
        truncate: fh.truncate.bind(fh),
        sync: fh.sync.bind(fh),
        close: fh.close.bind(fh),
        async write(buf: Uint8Array, off: number, len: number, pos: number | null) {
          fs.writes.push(path);
          if (fs.failNext > 0) {
            fs.failNext--;
            await fh.write(buf, off, Math.floor(len / 2), pos); // torn write, then the error
            throw Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
          }
          return fh.write(buf, off, len, pos);
        },
      };
    },
  };
  return fs;
}

describe("hourKey", () => {
  it.each([
    [1755000000.0, "20250812_12"],
    [1755003599.9, "20250812_12"],
    [1755003600.0, "20250812_13"],
    [1000000.0, "19700112_13"],
    [0, "19700101_00"],
  ])("%s -> %s", (ts, key) => expect(hourKey(ts)).toBe(key));

  it("files phases by end hour and OPEN markers by start hour", () => {
    expect(streamFile("phases", phase(1755000040.0, 1755003641.5))).toBe("phases/20250812_13.jsonl");
    expect(streamFile("phases", phase(1755000040.0, -1.0))).toBe("phases/20250812_12.jsonl");
    expect(streamFile("metrics", { ts: 1, step_key: null, step: null, metrics: {} })).toBe("metrics.jsonl");
  });
});

describe("PartitionedAppender", () => {
  it("groups by hour in ascending order with one write per file, preserving input order inside a file", async () => {
    const fs = instrumentedFs();
    const a = new PartitionedAppender(dir, { fs });
    const recs = [phase(7300, 7400, "late"), phase(100, 200, "a"), phase(7200, -1, "open"), phase(300, 400, "b")];
    const res = await a.appendStream("phases", recs);
    expect(res).toMatchObject({ written: 4, failed: [], fileErrors: [] });
    expect(readdirSync(join(dir, "phases")).sort()).toEqual(["19700101_00.jsonl", "19700101_02.jsonl"]);
    const h0 = readFileSync(join(dir, "phases/19700101_00.jsonl"), "utf8").trim().split("\n");
    expect(h0.map((l) => (JSON.parse(l) as PhaseEvent).name)).toEqual(["a", "b"]);
    const h2 = readFileSync(join(dir, "phases/19700101_02.jsonl"), "utf8");
    expect(h2).toBe(
      '{"name":"late","t0":7300.0,"t1":7400.0,"node":"n","gpus":[0],"rank":0,"role":"train"}\n' +
        '{"name":"open","t0":7200.0,"t1":-1.0,"node":"n","gpus":[0],"rank":0,"role":"train"}\n',
    );
    expect(fs.writes.map((p) => p.slice(dir.length + 1))).toEqual(["phases/19700101_00.jsonl", "phases/19700101_02.jsonl"]);
  });

  it("truncates a torn tail left by a crash before appending, and reports it", async () => {
    mkdirSync(join(dir, "phases"));
    const file = join(dir, "phases/19700101_00.jsonl");
    writeFileSync(file, '{"complete":1}\n{"torn":');
    const torn: [string, number][] = [];
    const a = new PartitionedAppender(dir, { onTornTail: (f, n) => torn.push([f, n]) });
    await a.appendStream("phases", [phase(1, 2)]);
    expect(readFileSync(file, "utf8")).toBe(
      '{"complete":1}\n{"name":"p","t0":1.0,"t1":2.0,"node":"n","gpus":[0],"rank":0,"role":"train"}\n',
    );
    expect(torn).toEqual([["phases/19700101_00.jsonl", 8]]);
  });

  it("keeps the whole lines of a torn write, cuts the torn rest, and a retry writes each line exactly once", async () => {
    const fs = instrumentedFs();
    const a = new PartitionedAppender(dir, { fs });
    await a.appendStream("data_buffer", [{ ts: 1, length: 1 }]);
    fs.failNext = 1; // 33 of 66 bytes land: one whole line and half of the next
    const res = await a.appendStream("data_buffer", [
      { ts: 2, length: 2 },
      { ts: 3, length: 3 },
      { ts: 4, length: 4 },
    ]);
    expect(res.written).toBe(1);
    expect(res.failed).toEqual([
      { ts: 3, length: 3 },
      { ts: 4, length: 4 },
    ]);
    expect(res.fileErrors[0]?.file).toBe("data_buffer.jsonl");
    expect(res.fileErrors[0]?.error.message).toMatch(/EIO/);
    expect(readFileSync(join(dir, "data_buffer.jsonl"), "utf8")).toBe('{"ts":1.0,"length":1}\n{"ts":2.0,"length":2}\n');
    const retry = await a.appendStream("data_buffer", res.failed);
    expect(retry.written).toBe(2);
    expect(readFileSync(join(dir, "data_buffer.jsonl"), "utf8")).toBe(
      '{"ts":1.0,"length":1}\n{"ts":2.0,"length":2}\n{"ts":3.0,"length":3}\n{"ts":4.0,"length":4}\n',
    );
  });

  it("trusts the file size over write(): lines that landed before an error are not retried", async () => {
    // A write that reaches the disk but reports EIO (e.g. a flaky network fs).
    const fs: WriterFs = {
      ...nodeWriterFs,
      async openAppend(path) {
        const fh = await nodeWriterFs.openAppend(path);
        return Object.assign(Object.create(fh) as object, {
          read: fh.read.bind(fh),
          stat: fh.stat.bind(fh),
          truncate: fh.truncate.bind(fh),
          sync: fh.sync.bind(fh),
          close: fh.close.bind(fh),
          async write(buf: Uint8Array, off: number, len: number, pos: number | null) {
            await fh.write(buf, off, len, pos);
            throw Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
          },
        });
      },
    };
    const a = new PartitionedAppender(dir, { fs });
    const res = await a.appendStream("data_buffer", [
      { ts: 1, length: 1 },
      { ts: 2, length: 2 },
    ]);
    expect(res).toMatchObject({ written: 2, failed: [] });
    expect(res.fileErrors).toHaveLength(1);
    expect(readFileSync(join(dir, "data_buffer.jsonl"), "utf8")).toBe('{"ts":1.0,"length":1}\n{"ts":2.0,"length":2}\n');
  });

  it("when even the cut fails, repairs the torn tail before the next append (no torn line in the middle, no duplicate)", async () => {
    const fs = instrumentedFs();
    let truncateFails = true;
    const failingTruncate: WriterFs = {
      ...fs,
      async openAppend(path) {
        const fh = await fs.openAppend(path);
        return { ...fh, truncate: async (n: number) => (truncateFails ? Promise.reject(new Error("EIO: truncate")) : fh.truncate(n)) };
      },
    };
    const torn: [string, number][] = [];
    const a = new PartitionedAppender(dir, { fs: failingTruncate, onTornTail: (f, n) => torn.push([f, n]) });
    fs.failNext = 1;
    const res = await a.appendStream("data_buffer", [
      { ts: 2, length: 2 },
      { ts: 3, length: 3 },
      { ts: 4, length: 4 },
    ]);
    expect(res.written).toBe(1);
    expect(readFileSync(join(dir, "data_buffer.jsonl"), "utf8")).toBe('{"ts":2.0,"length":2}\n{"ts":3.0,"');
    truncateFails = false;
    expect((await a.appendStream("data_buffer", res.failed)).written).toBe(2);
    expect(torn).toEqual([["data_buffer.jsonl", 11]]);
    expect(readFileSync(join(dir, "data_buffer.jsonl"), "utf8")).toBe(
      '{"ts":2.0,"length":2}\n{"ts":3.0,"length":3}\n{"ts":4.0,"length":4}\n',
    );
  });

  it("writes a large group in chunks; a failure in a later chunk keeps the earlier ones and the whole lines before the tear", async () => {
    let writes = 0;
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
            if (++writes === 2) {
              await fh.write(buf, off, Math.floor(len / 2), pos);
              throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
            }
            return fh.write(buf, off, len, pos);
          },
        };
      },
    };
    const a = new PartitionedAppender(dir, { fs });
    const pad = "p".repeat(1000);
    const recs = Array.from({ length: 3000 }, (_, i) => ({ ts: 1, step_key: null, step: i, metrics: { pad } }));
    const res = await a.appendStream("metrics", recs);
    const perChunk = Math.floor(MAX_WRITE_CHARS / (JSON.stringify(recs[0]).length + 3)); // lines of ~1040 bytes
    expect(res.written).toBeGreaterThan(perChunk); // chunk 1 and about half of chunk 2
    expect(res.written).toBeLessThan(2 * perChunk);
    expect(res.failed[0]).toBe(recs[res.written]);
    expect(res.failed).toHaveLength(3000 - res.written);
    const text = readFileSync(join(dir, "metrics.jsonl"), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.split("\n")).toHaveLength(res.written + 1);
    expect((await a.appendStream("metrics", res.failed)).written).toBe(3000 - res.written);
    const steps = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  it("returns hundreds of thousands of failed records without overflowing the stack", async () => {
    const fs: WriterFs = {
      ...nodeWriterFs,
      openAppend: async () => {
        throw Object.assign(new Error("ENOSPC: no space left on device, open"), { code: "ENOSPC" });
      },
    };
    const a = new PartitionedAppender(dir, { fs });
    const n = 400_000; // ~20 s at 20k records/s; `push(...recs)` threw RangeError here
    const recs = Array.from({ length: n }, (_, i) => ({ ts: 1755000000 + i / 100, node: "n", gpu: 0, util: 1, mem_mb: i, power_w: 1 }));
    const res = await a.appendStream("gpu_util", recs);
    expect(res.written).toBe(0);
    expect(res.failed).toHaveLength(n);
    expect(res.failed[0]).toBe(recs[0]);
    expect(res.failed[n - 1]).toBe(recs[n - 1]);
    expect(res.fileErrors.map((f) => f.file)).toEqual(["gpu_util/20250812_12.jsonl", "gpu_util/20250812_13.jsonl"]);
  });

  it("reports unserializable records instead of writing them", async () => {
    const a = new PartitionedAppender(dir);
    const res = await a.appendStream("gpu_util", [
      { ts: 1e20, node: "n", gpu: 0, util: 0, mem_mb: 0, power_w: 0 },
      { ts: 1, node: "n", gpu: 0, util: 0, mem_mb: 0, power_w: 0 },
    ]);
    expect(res.written).toBe(1);
    expect(res.unserializable).toHaveLength(1);
    expect(existsSync(join(dir, "gpu_util/19700101_00.jsonl"))).toBe(true);
  });
});
