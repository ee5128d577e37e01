/**
 * stop() while a flush is writing: the records of that flush are "in flight"
 * (not counted by writer.pending()), so the final flush must wait for it
 * rather than conclude there is nothing left — else stop() returns, the lock
 * is released and the process exits while lines are still being written
 * (seen as missing lines in collector/disk-full.test.ts).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeWriterFs } from "@/lib/store/writer/writer-fs";
import type { WriterFs } from "@/lib/store/writer/writer-fs";
import { startCollector } from "./server";
import { captureLog } from "./testing/capture-log";

let dump: string;
beforeEach(() => {
  dump = mkdtempSync(join(tmpdir(), "rlb-stop-"));
});
afterEach(() => rmSync(dump, { recursive: true, force: true }));

describe("collector stop", () => {
  it("waits for a flush in progress before it reports and releases the lock", async () => {
    let slowWrites = 0;
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
            slowWrites++;
            await new Promise((r) => setTimeout(r, 300)); // a slow disk
            return fh.write(buf, off, len, pos);
          },
        };
      },
    };
    const h = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, fs, log: captureLog(), now: () => 1000 });
    h.writer.add("data_buffer", Array.from({ length: 100 }, (_, i) => ({ ts: 1000 + i, length: i })));
    void h.flush(); // in flight: pending() is 0 from here on
    await new Promise((r) => setTimeout(r, 50));
    expect(h.writer.pending()).toBe(0);
    expect(await h.stop()).toEqual({ ok: true, lost: 0 });
    expect(slowWrites).toBe(1);
    expect(readFileSync(join(h.dashDir, "data_buffer.jsonl"), "utf8").split("\n")).toHaveLength(101);
    expect(existsSync(join(h.dashDir, ".collector.lock"))).toBe(false);
  });

  it("indexes the phase hours it wrote before it releases the lock (docs/formats.md §4.16)", async () => {
    const h = await startCollector({ runDir: dump, gpuSource: "none", flushIntervalS: 60, log: captureLog(), now: () => 1000 });
    const o = { node: "10.0.0.1", gpus: [0], rank: 0, role: "train" as const };
    // two hours: neither is two hours behind the newest, so only stopping indexes them
    h.writer.add("phases", [{ name: "a", t0: 3600 * 500 + 1, t1: -1, ...o }, { name: "a", t0: 3600 * 500 + 1, t1: 3600 * 501 + 2, ...o }]);
    await h.flush();
    expect(existsSync(join(h.dashDir, "index"))).toBe(false);
    expect(await h.stop()).toEqual({ ok: true, lost: 0 });
    const index = join(h.dashDir, "index", "phases");
    expect(readdirSync(index).sort()).toEqual(readdirSync(join(h.dashDir, "phases")).map((n) => n.replace(".jsonl", ".json")).sort());
    const second = JSON.parse(readFileSync(join(index, readdirSync(index).sort()[1]!), "utf8")) as { facts: { closes: unknown[] } };
    expect(second.facts.closes).toEqual([[3600 * 500 + 1, "10.0.0.1", 0, "a"]]);
  });
});
