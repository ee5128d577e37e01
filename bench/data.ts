/**
 * Bench inputs, generated once and cached under `<data-dir>/bench/` (reused while the
 * stamp's version matches):
 *  - `fleet-8h/`   64 GPUs (8 nodes × 8), 8.5 h at 1 Hz (~2 M gpu_util rows), 8 engines
 *                  scraped every 2 s with the full default whitelist, phases for 64 ranks,
 *                  a straggler and a stall at the end — lib/demo/fleet.ts, through RunWriter;
 *  - `dumps/`      one 512-sample agentic step (8 ranks: DP=4 × TP=2) with an 8k-token
 *                  truncated sample, mirror, sidecar and tokenizer — lib/demo/dumps.ts —
 *                  and the step's lifecycle events (batch anatomy of 512 lanes).
 * Timestamps are fixed (not "now") so every bench machine reads the same bytes.
 */
import fs from "node:fs";
import path from "node:path";
import { agenticSample, sampleEvent, writeRolloutDump, writeTrainDumps, type DemoSample } from "@/lib/demo/dumps";
import { FLEET_METRICS_FULL, writeFleetRun } from "@/lib/demo/fleet";
import { DEMO_GENERATOR_VERSION } from "@/lib/demo/generate";
import { Rng } from "@/lib/demo/prng";
import { corpusWords, makeConversation } from "@/lib/demo/text";
import { DemoTokenizer } from "@/lib/demo/tokenizer";
import type { TrajectoryEvent } from "@/lib/store/format";
import { indexPhaseHours } from "@/lib/store/writer/phase-indexer";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { nodeWriterFs } from "@/lib/store/writer/writer-fs";

export const BENCH_DATA_VERSION = `${DEMO_GENERATOR_VERSION}.2`;
export const BENCH_END_TS = 1_764_000_000;
export const BENCH_HOURS = 8.5;
export const DUMP_RID = 0;
export const DUMP_SAMPLES = 512;

export interface BenchData {
  root: string;
  fleetDir: string;
  dumpsDir: string;
  /** Binary-column cache of the telemetry store (the product keeps it in the data dir). */
  storeCacheDir: string;
  /** Sample index of the 8k-token sample in `dumps/`. */
  longSample: number;
  generated: boolean;
}

interface Stamp {
  version: string;
  longSample: number;
}

export async function ensureBenchData(dataDir: string, log: (s: string) => void, force = false): Promise<BenchData> {
  const root = path.join(dataDir, "bench");
  const stampFile = path.join(root, "stamp.json");
  const fleetDir = path.join(root, "fleet-8h");
  const dumpsDir = path.join(root, "dumps");
  const storeCacheDir = path.join(root, "store-cache");
  let stamp: Stamp | null = null;
  try {
    stamp = JSON.parse(fs.readFileSync(stampFile, "utf8")) as Stamp;
  } catch {
    stamp = null;
  }
  if (!force && stamp?.version === BENCH_DATA_VERSION && fs.existsSync(fleetDir) && fs.existsSync(dumpsDir)) {
    await indexOldPhaseHours(fleetDir, log);
    return { root, fleetDir, dumpsDir, storeCacheDir, longSample: stamp.longSample, generated: false };
  }
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  log(`generating the bench data in ${root} (once; cached until the generator changes)…`);
  const t = performance.now();
  await writeBenchFleet(fleetDir, { name: "fleet-8h", hours: BENCH_HOURS }, log);
  const longSample = await writeDumpRun(dumpsDir);
  fs.writeFileSync(stampFile, JSON.stringify({ version: BENCH_DATA_VERSION, longSample } satisfies Stamp));
  log(`  done in ${((performance.now() - t) / 1000).toFixed(0)} s (${(dirBytes(root) / 1048576).toFixed(0)} MB)`);
  return { root, fleetDir, dumpsDir, storeCacheDir, longSample, generated: true };
}

/**
 * The bench's fleet run (64 GPUs unless `nodes` says otherwise; a stall at the end),
 * logging its progress every 10 % — the 8 h run here and the scale runs of bench/scale.ts.
 */
export async function writeBenchFleet(dir: string, o: { name: string; hours: number; nodes?: number; stream?: boolean }, log: (s: string) => void): Promise<void> {
  const t = performance.now();
  let last = -1;
  await writeFleetRun(dir, {
    name: `bench-${o.name}`,
    endTs: BENCH_END_TS,
    hours: o.hours,
    nodes: o.nodes,
    seed: 4242,
    scrapeIntervalS: 2,
    metrics: FLEET_METRICS_FULL,
    stall: true,
    stream: o.stream,
    onProgress: (f) => {
      const pct = Math.floor(f * 10) * 10;
      if (pct !== last) {
        last = pct;
        log(`  ${o.name}: ${pct}% (${((performance.now() - t) / 1000).toFixed(0)} s)`);
      }
    },
  });
}

async function writeDumpRun(dir: string): Promise<number> {
  const rng = new Rng(99).fork("bench-dumps");
  const tok = new DemoTokenizer(corpusWords());
  tok.writeTo(path.join(dir, "tokenizer"));
  const samples: DemoSample[] = [];
  let longSample = -1;
  for (let g = 0; g < DUMP_SAMPLES / 8; g++) {
    const family = rng.pick(["math", "search", "code"]);
    for (let j = 0; j < 8; j++) {
      const runaway = g === 5 && j === 3;
      const conv = makeConversation(rng.fork(`c${g}.${j}`), { pCorrect: 0.5, runaway, family });
      const s = agenticSample(rng.fork(`s${g}.${j}`), tok, conv, {
        index: g * 8 + j,
        groupIndex: g,
        maxResponseLen: 8192,
        versionOfTurn: (t) => String(t > 1 ? 1 : 0),
      });
      if (runaway) longSample = s.index;
      samples.push(s);
    }
  }
  const writtenAt = BENCH_END_TS - 600;
  await writeLifecycle(dir, samples, writtenAt - 900);
  await writeRolloutDump({ runDir: dir, rolloutId: DUMP_RID, evaluation: false, samples, writtenAt, mirror: true, sidecar: true });
  await writeTrainDumps(rng.fork("train"), { runDir: dir, rolloutId: DUMP_RID, samples, layout: { dp: 4, tp: 2 }, writtenAt: writtenAt + 5 });
  return longSample;
}

/**
 * Lifecycle events of the step (docs/formats.md §4.8): each sample starts within the first
 * minute, then alternates generation (60 tokens/s) and tool calls, weight version of
 * the turn as in its dump.
 */
async function writeLifecycle(dir: string, samples: readonly DemoSample[], r0: number): Promise<void> {
  const writer = await RunWriter.open({ dashDir: path.join(dir, "dashboard"), meta: { run_name: "bench-dumps", start_ts: r0 - 60, args: {} } });
  const events: TrajectoryEvent[] = [];
  for (const s of samples) {
    const ev = (ts: number, kind: TrajectoryEvent["kind"], turn: number, version: string, detail = "") =>
      sampleEvent(s, Math.round(ts * 1000) / 1000, kind, turn, version, detail);
    let t = r0 + (s.index % 120) * 0.5;
    const v0 = s.weightVersions[0] ?? "0";
    events.push(ev(t, "attempt_start", -1, v0), ev(t + 0.2, "gen_start", -1, v0));
    t += 0.2;
    s.turnTokens.forEach((n, k) => {
      const v = s.weightVersions[k] ?? v0;
      const t1 = t + 0.05 + n / 60;
      events.push(ev(t, "gen_start", k + 1, v), ev(t1, "gen_end", k + 1, v, String(n)));
      t = t1;
      const tool = s.toolSeconds[k];
      if (tool !== undefined && k < s.turnTokens.length - 1) {
        events.push(ev(t, "tool_start", k + 1, v, "1 calls"), ev(t + tool, "tool_end", k + 1, v, "1 calls"));
        t += tool;
      }
    });
    events.push(ev(t + 0.1, "attempt_end", -1, s.weightVersions.at(-1) ?? v0, s.status));
  }
  events.sort((a, b) => a.ts - b.ts);
  writer.add("trajectories", events);
  await writer.close();
}

/**
 * A fleet run of `nodes` × 8 GPUs over `hours` for the scale figures (bench/scale.ts,
 * bench/scale-day.ts), streamed (lib/demo/fleet.ts `stream`) into
 * `<dataDir>/bench-scale/<G>g-<H>h/` and reused while its stamp matches. The 1024-GPU day
 * is ~15 GB and takes minutes to write: it is written once.
 */
export async function ensureScaleRun(dataDir: string, nodes: number, hours: number, log: (s: string) => void): Promise<{ root: string; runDir: string; genS: number | null; bytes: number }> {
  const name = `${nodes * 8}g-${hours}h`;
  const root = path.join(dataDir, "bench-scale", name);
  const runDir = path.join(root, name);
  const stampFile = path.join(root, "stamp.json");
  const version = `${BENCH_DATA_VERSION}.scale2`;
  try {
    const st = JSON.parse(fs.readFileSync(stampFile, "utf8")) as { version: string; genS: number; bytes: number };
    if (st.version === version) {
      await indexOldPhaseHours(runDir, log);
      return { root, runDir, genS: st.genS, bytes: st.bytes };
    }
  } catch {
    /* not generated yet */
  }
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  const t = performance.now();
  await writeBenchFleet(runDir, { name, hours, nodes, stream: true }, log);
  const genS = (performance.now() - t) / 1000;
  const bytes = dirBytes(runDir);
  fs.writeFileSync(stampFile, JSON.stringify({ version, genS, bytes }));
  log(`  ${name}: written in ${genS.toFixed(0)} s, ${(bytes / 1048576).toFixed(0)} MB`);
  return { root, runDir, genS, bytes };
}

/**
 * The phase hour index (docs/formats.md §4.16) of a run generated before the writer kept
 * one: written now, as the writer would have at close (the same function), so reused data
 * reads like freshly generated data. Does nothing when every hour's index is current.
 */
async function indexOldPhaseHours(runDir: string, log: (s: string) => void): Promise<void> {
  const { indexed } = await indexPhaseHours(nodeWriterFs, path.join(runDir, "dashboard"), { warn: log });
  if (indexed.length > 0) log(`  ${path.basename(runDir)}: indexed ${indexed.length} phase hours written before the writer kept their index`);
}

/** Bytes under `dir` (files, recursively). */
export function dirBytes(dir: string): number {
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else bytes += fs.statSync(p).size;
    }
  };
  walk(dir);
  return bytes;
}
