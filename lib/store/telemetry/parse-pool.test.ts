/**
 * A gpu_util file parsed in parts — this thread from the start, real worker threads from
 * the end (parse-pool.ts) — must give the block one pass gives: the same rows in the same
 * order, the same tick groups (a tick cut in two by a part boundary is one group), the same
 * lanes, the same corrupt-line tally and the same end offset (a partial last line stays on
 * disk). The files are small; the split threshold is lowered for the test.
 *
 * Phase hours are handed to the workers whole, while this thread parses others: a day of
 * them read at once must give each hour the block one pass gives, its OPEN markers matched
 * inside it as one pass matches them.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Dicts, GpuBlock, PhaseBlock } from "@/lib/store/telemetry/blocks";
import { GpuLineScanner, PhaseLineScanner } from "@/lib/store/telemetry/ingest";
import { ingestSplit, ingestWhole, parsePoolState, resetParsePool, setParseWorkers } from "@/lib/store/telemetry/parse-pool";
import { fileReader, ingestChunks, scannerCodec } from "@/lib/store/telemetry/read-range";
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
    const codec = scannerCodec(new GpuLineScanner(new Dicts()));
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
    const r = await ingestChunks(fileReader(fh), scannerCodec(new GpuLineScanner(new Dicts())), new GpuBlock(), 0, text.length, null);
    await fh.close();
    expect(r.pos).toBe(whole.offset);
    expect(r.corrupt).toBe(whole.corrupt);
    fs.rmSync(runDir, { recursive: true, force: true });
  });
});

/**
 * Phase hours of a 16-rank job as the collector files them: per step every rank opens a
 * phase (an OPEN marker, `t1` -1.0, in its start hour) and closes it (in its end hour, so a
 * phase that runs over the hour closes in the next file); some never close. With a corrupt
 * line, a line only the generic parser takes and a partial last line in each file.
 */
function phaseHours(hours: number, stepsPerHour: number): string[] {
  const texts: string[] = [];
  const closings: string[][] = Array.from({ length: hours + 1 }, () => []);
  const line = (name: string, t0: number, t1: string, rank: number) =>
    `{"name":"${name}","t0":${t0},"t1":${t1},"node":"10.3.0.${rank >> 3}","gpus":[${rank & 7}],"rank":${rank},"role":"train"}`;
  for (let h = 0; h < hours; h++) {
    const lines: string[] = [];
    for (let s = 0; s < stepsPerHour; s++) {
      const t0 = HOUR + h * 3600 + s * (3600 / stepsPerHour) + 0.125;
      for (let rank = 0; rank < 16; rank++) {
        const name = s % 3 === 0 ? "actor_train" : "train_wait";
        lines.push(line(name, t0, "-1.0", rank));
        if (rank === 5 && s === 7) continue; // never closes
        const t1 = t0 + (s === stepsPerHour - 1 ? 3600 / stepsPerHour + 0.5 : 3) + rank / 1000; // the last step's phases close next hour
        const closing = line(name, t0, String(Math.round(t1 * 1000) / 1000), rank);
        closings[Math.floor((t1 - HOUR) / 3600)]!.push(closing);
      }
    }
    lines.push(...closings[h]!); // the hour's closings, the previous hour's late ones first
    // strings first seen in a different order in each hour (the worker's ids differ from the store's)
    if (h % 2 === 1) lines.unshift(`{"name":"generate_h${h}","t0":${HOUR + h * 3600 + 2},"t1":${HOUR + h * 3600 + 4},"node":"10.9.0.${h}","gpus":[],"rank":-1,"role":"rollout_manager"}`);
    lines.splice(17, 0, '{"name":"actor_train","t0":12'); // corrupt
    lines.splice(40, 0, line("rollout", HOUR + h * 3600 + 1, "-1.0", 3).replace(/,/g, ", ")); // generic path
    texts.push(`${lines.join("\n")}\n{"name":"actor_train","t0":${HOUR + h * 3600 + 9},"t1`); // partial last line
  }
  return texts;
}

function writePhaseRun(texts: string[]): string {
  const runDir = makeTmpDir("rlboard-whole-");
  const dir = path.join(runDir, "dashboard", "phases");
  fs.mkdirSync(dir, { recursive: true });
  texts.forEach((t, h) => fs.writeFileSync(path.join(dir, `20251124_${String(8 + h).padStart(2, "0")}.jsonl`), t));
  return runDir;
}

/** Every hour a store read at once: its events, OPEN markers, markers left unmatched inside it, bounds, bytes consumed. */
async function readPhases(runDir: string) {
  const store = openMetricStore(runDir, { follow: false });
  const files = await store.phases.files();
  const blocks = await store.phases.read(files);
  return {
    hours: blocks.map((b, k) => ({
      events: b.rows,
      open: [...b.open],
      unmatched: [...b.localUnmatched()],
      minT: b.minT,
      maxT: b.maxT,
      offset: files[k]!.offset,
    })),
    corrupt: store.phases.corruptLines(),
  };
}

describe("phase hours parsed whole by workers while this thread parses others", () => {
  it("gives every hour the block one pass gives (events, OPEN markers, markers unmatched, corrupt lines, end offset)", async () => {
    const texts = phaseHours(8, 60); // ~180 kB an hour
    const runDir = writePhaseRun(texts);
    setParseWorkers(0);
    const one = await readPhases(runDir);
    await resetParsePool();
    setParseWorkers(1, undefined, 16 << 10);
    const pooled = await readPhases(runDir);
    const state = parsePoolState();
    expect(state.broken).toBeNull();
    expect(state.partsDone).toBeGreaterThan(0); // a worker parsed hours…
    expect(state.partsDone).toBeLessThan(8); // …and this thread the others
    expect(one.corrupt).toBe(8);
    expect(one.hours[3]!.events.length).toBe(60 * 16 * 2 - 1 + 2); // markers and closings (one never closes, the last step's close in the next hour, the previous hour's here), the generic line, the rollout manager's
    expect(one.hours[3]!.unmatched.length).toBeGreaterThan(16); // the last step closes in the next file; one phase never
    expect(one.hours[2]!.offset).toBe(texts[2]!.lastIndexOf("\n") + 1);
    expect(pooled.corrupt).toBe(one.corrupt);
    expect(pooled.hours).toEqual(one.hours);
    fs.rmSync(runDir, { recursive: true, force: true });
  });

  it("parses an hour here when its worker fails on it", async () => {
    const texts = phaseHours(1, 40);
    const runDir = writePhaseRun(texts);
    setParseWorkers(0);
    const one = await readPhases(runDir);
    setParseWorkers(1, undefined, 1);
    const dicts = new Dicts();
    const fh = await fs.promises.open(path.join(runDir, "dashboard", "phases", "20251124_08.jsonl"), "r");
    const block = new PhaseBlock(dicts.phaseStrings);
    let adopted = 0;
    // A job no worker knows how to parse: the worker answers with an error.
    const r = await ingestWhole(fh, scannerCodec(new PhaseLineScanner(dicts)), { stream: "nonsense" as "phases", adopt: () => void adopted++ }, block, texts[0]!.length);
    await fh.close();
    expect(r).not.toBeNull();
    expect(adopted).toBe(0);
    expect(r!.pos).toBe(one.hours[0]!.offset);
    expect(r!.corrupt).toBe(1);
    expect(block.rows).toEqual(one.hours[0]!.events);
    expect([...block.localUnmatched()]).toEqual(one.hours[0]!.unmatched);
    expect(parsePoolState().broken).toBeNull();
    fs.rmSync(runDir, { recursive: true, force: true });
  });
});
