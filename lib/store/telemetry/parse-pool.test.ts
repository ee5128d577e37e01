/**
 * A gpu_util file parsed in parts — this thread from the start, real worker threads from
 * the end (parse-pool.ts) — must give the block one pass gives: the same rows in the same
 * order, the same tick groups (a tick cut in two by a part boundary is one group), the same
 * lanes, the same corrupt-line tally and the same end offset (a partial last line stays on
 * disk). The files are small; the split threshold is lowered for the test.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Dicts, GpuBlock } from "@/lib/store/telemetry/blocks";
import { GpuLineScanner } from "@/lib/store/telemetry/ingest";
import { ingestSplit, parsePoolState, resetParsePool, setParseWorkers } from "@/lib/store/telemetry/parse-pool";
import { fileReader, gpuRangeCodec, ingestChunks } from "@/lib/store/telemetry/read-range";
import { openMetricStore } from "@/lib/store/telemetry/store";
import { makeTmpDir, pyJsonLine } from "@/lib/store/telemetry/testing";

const HOUR = 1_763_971_200;

/**
 * One hour of a fleet's gpu_util lines (`nodes` × 8 GPUs a tick), with what a real file can
 * hold: corrupt lines, lines only the generic parser takes (spaces, reordered keys), a
 * node that first shows up late, ticks out of order, and a partial last line.
 */
function hourText(nodes: number, ticks: number): string {
  const lines: string[] = [];
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let t = 0; t < ticks; t++) {
    const ts = Math.round((HOUR + t * 1.5 + (t === ticks / 2 ? -40 : 0)) * 1000) / 1000; // one tick out of order
    const nodeCount = t > (ticks * 3) / 4 ? nodes + 1 : nodes; // a node that joins late
    for (let n = 0; n < nodeCount; n++)
      for (let g = 0; g < 8; g++) {
        const row = { ts, node: `10.2.${n >> 8}.${n & 255}`, gpu: g, util: Math.floor(rnd() * 101), mem_mb: Math.floor(rnd() * 80000), power_w: Math.floor(rnd() * 700) };
        const r = rnd();
        if (r < 0.002) lines.push(`{"ts":${ts},"node":"10.2.0.1","gpu":`); // corrupt: cut short
        else if (r < 0.004) lines.push(JSON.stringify(row).replace(/,/g, ", ")); // generic path
        else if (r < 0.005) lines.push(JSON.stringify({ node: row.node, ts, gpu: g, util: row.util, mem_mb: row.mem_mb, power_w: row.power_w })); // reordered keys: generic
        else lines.push(pyJsonLine(row));
      }
  }
  return `${lines.join("\n")}\n{"ts":${HOUR + 9999},"node":"10.2.0.1","gpu":0,"ut`; // partial last line
}

function writeRun(text: string): string {
  const runDir = makeTmpDir("rlboard-split-");
  const dir = path.join(runDir, "dashboard", "gpu_util");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "20251124_08.jsonl"), text);
  return runDir;
}

/** What a store read from the run: rows by name, groups, lanes, corrupt lines, bytes consumed. */
async function readAll(runDir: string) {
  const store = openMetricStore(runDir, { follow: false });
  const [file] = await store.gpuUtil.files();
  const [b] = await store.gpuUtil.read([file!]);
  const d = store.dicts;
  const rows: [number, string, number, number, number, number][] = [];
  const groups: [number, number][] = [];
  for (let g = 0; g < b!.groups; g++) {
    groups.push([b!.groupTs(g), b!.groupStart(g)]);
    for (let r = b!.groupStart(g); r < b!.groupEnd(g); r++) {
      const l = b!.lane.get(r);
      rows.push([b!.groupTs(g), d.laneNode[l]!, d.laneGpu[l]!, b!.util.get(r), b!.mem.get(r), b!.power.get(r)]);
    }
  }
  const lanes = [...b!.lanes].map((l) => `${d.laneNode[l]}/${d.laneGpu[l]}`).sort();
  return { rows, groups, lanes, sorted: b!.sorted, minTs: b!.minTs, maxTs: b!.maxTs, corrupt: store.gpuUtil.corruptLines(), offset: file!.offset };
}

afterEach(async () => {
  await resetParsePool();
});
afterAll(async () => {
  await resetParsePool();
});

describe("a large gpu_util file parsed in parts", () => {
  it("gives exactly the block one pass gives (rows, tick groups, lanes, corrupt lines, end offset)", async () => {
    const text = hourText(40, 600); // ~2.8 MB
    const runDir = writeRun(text);
    setParseWorkers(0);
    const one = await readAll(runDir);
    await resetParsePool();
    setParseWorkers(2, 64 << 10);
    const split = await readAll(runDir);
    const state = parsePoolState();
    expect(state.broken).toBeNull();
    expect(state.partsDone).toBeGreaterThan(0); // workers really parsed parts
    expect(one.rows.length).toBeGreaterThan(190_000);
    expect(one.corrupt).toBeGreaterThan(10);
    expect(one.sorted).toBe(false);
    expect(one.offset).toBe(text.lastIndexOf("\n") + 1);
    expect(split.rows.length).toBe(one.rows.length);
    expect(split.rows).toEqual(one.rows);
    expect(split.groups).toEqual(one.groups);
    expect(split.lanes).toEqual(one.lanes);
    expect(split.lanes).toHaveLength(41 * 8);
    expect([split.sorted, split.minTs, split.maxTs, split.corrupt, split.offset]).toEqual([one.sorted, one.minTs, one.maxTs, one.corrupt, one.offset]);
    fs.rmSync(runDir, { recursive: true, force: true });
  });

  it("parses a part here when its worker fails on it, and the result is the same", async () => {
    const text = hourText(16, 900);
    const runDir = writeRun(text);
    setParseWorkers(0);
    const one = await readAll(runDir);
    setParseWorkers(2, 64 << 10);
    // A job no worker knows how to parse: each worker answers with an error.
    const codec = gpuRangeCodec(new GpuLineScanner(new Dicts()));
    const fh = await fs.promises.open(path.join(runDir, "dashboard", "gpu_util", "20251124_08.jsonl"), "r");
    const block = new GpuBlock();
    let adopted = 0;
    const r = await ingestSplit(fh, codec, { stream: "nonsense" as "gpu_util", adopt: () => void adopted++ }, block, text.length);
    await fh.close();
    expect(r).not.toBeNull();
    expect(adopted).toBe(0);
    expect(r!.pos).toBe(one.offset);
    expect(r!.corrupt).toBe(one.corrupt);
    expect(block.rows).toBe(one.rows.length);
    const groups: [number, number][] = [];
    for (let g = 0; g < block.groups; g++) groups.push([block.groupTs(g), block.groupStart(g)]);
    expect(groups).toEqual(one.groups);
    expect(parsePoolState().broken).toBeNull(); // an answered error is not a dead worker
    fs.rmSync(runDir, { recursive: true, force: true });
  });

  it("leaves files below the threshold to one pass, and reads every part of one that is split", async () => {
    const text = hourText(8, 300);
    const runDir = writeRun(text);
    setParseWorkers(2, text.length + 1);
    const whole = await readAll(runDir);
    expect(parsePoolState().partsDone).toBe(0);
    const fh = await fs.promises.open(path.join(runDir, "dashboard", "gpu_util", "20251124_08.jsonl"), "r");
    const r = await ingestChunks(fileReader(fh), gpuRangeCodec(new GpuLineScanner(new Dicts())), new GpuBlock(), 0, text.length, null);
    await fh.close();
    expect(r.pos).toBe(whole.offset);
    expect(r.corrupt).toBe(whole.corrupt);
    fs.rmSync(runDir, { recursive: true, force: true });
  });
});
