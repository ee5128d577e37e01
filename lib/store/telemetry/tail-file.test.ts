/**
 * Issue #11 item 15: in follow mode a live file replaced by another one (rename over
 * it, or rewritten in place) is re-read from byte 0 — the store never mixes the old
 * file's records with the new file's.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openMetricStore } from "@/lib/store/telemetry";
import { partitionKey } from "@/lib/store/format";
import { pyJsonLine, RunBuilder } from "@/lib/store/telemetry/testing";
import type { MetricsRecord } from "@/lib/store/telemetry/types";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function run(): RunBuilder {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  return b;
}
const rec = (step: number, tag: string): MetricsRecord => ({ ts: 1000 + step, step_key: "rollout/step", step, metrics: { [tag]: step } });
const text = (recs: readonly unknown[]) => recs.map((r) => `${pyJsonLine(r)}\n`).join("");
const gpuRow = (ts: number, util: number) => ({ ts, node: "n1", gpu: 0, util, mem_mb: 1000, power_w: 300 });

/** Replace `file` atomically by a new inode (write a temp file, rename over). */
function renameOver(file: string, content: string): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

describe("follow mode: a replaced file is re-read, not appended to", () => {
  it("metrics.jsonl replaced by rename with a larger, different file → only the new records", async () => {
    const b = run().metrics(rec(0, "old/a"), rec(1, "old/a"));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    expect((await store.metrics()).map((r) => r.step)).toEqual([0, 1]);
    const file = path.join(b.dash, "metrics.jsonl");
    const before = fs.statSync(file).size;
    const fresh = text([rec(10, "new/b"), rec(11, "new/b"), rec(12, "new/b"), rec(13, "new/b")]);
    renameOver(file, fresh);
    expect(fs.statSync(file).size).toBeGreaterThan(before);
    const rows = await store.metrics();
    expect(rows.map((r) => r.step)).toEqual([10, 11, 12, 13]);
    expect(rows.every((r) => "new/b" in r.metrics)).toBe(true);
  });

  it("a file rewritten in place (same inode) with different, longer content → only the new records", async () => {
    const b = run().metrics(rec(0, "old/a"), rec(1, "old/a"));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    expect((await store.metrics()).length).toBe(2);
    const file = path.join(b.dash, "metrics.jsonl");
    const ino = fs.statSync(file).ino;
    fs.writeFileSync(file, text([rec(20, "new/c"), rec(21, "new/c"), rec(22, "new/c")]));
    expect(fs.statSync(file).ino).toBe(ino);
    expect((await store.metrics()).map((r) => r.step)).toEqual([20, 21, 22]);
  });

  it("a live file that only grows keeps its rows and appends (no re-read)", async () => {
    const b = run().metrics(rec(0, "a"));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    const first = await store.metrics();
    expect(first.length).toBe(1);
    b.metrics(rec(1, "a"), rec(2, "a"));
    expect((await store.metrics()).map((r) => r.step)).toEqual([0, 1, 2]);
  });

  it("an hour partition replaced by a larger one → the window shows only the new samples", async () => {
    const ts = 1_755_000_000;
    const b = run().gpu(gpuRow(ts, 10), gpuRow(ts + 1, 11));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    const utils = async () => {
      const out: number[] = [];
      for (const blk of await store.gpuUtil.window(null, null))
        for (let g = 0; g < blk.groups; g++) for (let r = blk.gStart.get(g); r < blk.groupEnd(g); r++) out.push(blk.util.get(r));
      return out;
    };
    expect(await utils()).toEqual([10, 11]);
    const file = path.join(b.dash, "gpu_util", `${partitionKey(ts)}.jsonl`);
    renameOver(file, text([gpuRow(ts, 70), gpuRow(ts + 1, 71), gpuRow(ts + 2, 72), gpuRow(ts + 3, 73)]));
    expect(await utils()).toEqual([70, 71, 72, 73]);
    const [f] = await store.gpuUtil.files();
    expect(f!.replacements).toBe(1);
  });
});
