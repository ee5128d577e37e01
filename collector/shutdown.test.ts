/**
 * stop() while a flush is writing: the records of that flush are "in flight"
 * (not counted by writer.pending()), so the final flush must wait for it
 * rather than conclude there is nothing left — else stop() returns, the lock
 * is released and the process exits while lines are still being written
 * (seen as missing lines in collector/disk-full.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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
});
