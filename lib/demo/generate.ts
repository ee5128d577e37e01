/**
 * Demo runs for `npm run demo`, the e2e suite and the bench, written with the project's
 * own writers in the real on-disk formats (telemetry JSONL through lib/store/writer, .pt
 * dumps, parquet mirrors, trajectory sidecars). Deterministic for a given seed: `nowS`
 * only shifts timestamps (and file mtimes).
 *
 *  - `qwen3-4b-grpo-demo`     1 node × 8 GPUs, agentic GRPO, telemetry + dumps (qwen.ts)
 *  - `llama-70b-gspo-64gpu`   8 nodes × 8 GPUs, telemetry only, ~1 h, straggler + stall (fleet.ts)
 *  - `llama-70b-gspo-128gpu`  16 nodes × 8 GPUs, telemetry only, 20 min: more lanes than the
 *                             Compute Utilization view draws one by one, so it opens on the
 *                             fleet overview (lib/charts/lane-selection.ts FLEET_THRESHOLD)
 *  - `offline-dumps-only`     dumps without `dashboard/` (offline.ts)
 *  - `qwen3-4b-grpo-ablation` the Qwen demo's args with one key changed, metrics only (ablation.ts)
 *
 * A stamp file next to the runs records the generator version, so callers regenerate
 * when the generator changed (`demoRunsAreCurrent`).
 */
import fs from "node:fs";
import path from "node:path";
import { ABLATION_RUN, writeAblationRun } from "./ablation";
import { FLEET_METRICS_DEMO, writeFleetRun } from "./fleet";
import { OFFLINE_RUN, writeOfflineRun } from "./offline";
import { writeDemoHost } from "./host";
import { QWEN_NODE, QWEN_RUN, writeQwenRun } from "./qwen";

export interface DemoOptions {
  /** Wall-clock "now" in unix seconds; the newest telemetry ends here. */
  nowS: number;
  seed?: number;
}

/**
 * Bump whenever the generated files change. (A run added to DEMO_RUNS regenerates by
 * itself — "incomplete" — without invalidating the bench data keyed on this version.)
 */
export const DEMO_GENERATOR_VERSION = 5;
export const DEMO_SEED = 20250812;
export const FLEET_RUN = "llama-70b-gspo-64gpu";
/** > FLEET_THRESHOLD (64) lanes: the fleet overview's demo. */
export const BIG_FLEET_RUN = "llama-70b-gspo-128gpu";
export const BIG_FLEET_NODES = 16;
export const DEMO_RUNS = [QWEN_RUN, FLEET_RUN, BIG_FLEET_RUN, OFFLINE_RUN, ABLATION_RUN] as const;
export const LIVE_RUN = QWEN_RUN;
/** Written next to the runs (a file, so the run scan ignores it). */
export const STAMP_FILE = ".rlboard-demo.json";

export interface DemoStamp {
  version: number;
  seed: number;
  generated_at: number;
  runs: string[];
}

export async function generateDemoRuns(root: string, opts: DemoOptions): Promise<string[]> {
  const seed = opts.seed ?? DEMO_SEED;
  fs.mkdirSync(root, { recursive: true });
  fs.rmSync(path.join(root, STAMP_FILE), { force: true });
  for (const name of DEMO_RUNS) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  await writeQwenRun(root, opts.nowS, seed);
  writeDemoHost(path.join(root, QWEN_RUN), QWEN_NODE, opts.nowS, seed + 5); // docs/formats.md §4.12 (host.ts)
  const fleetEnd = opts.nowS - 95;
  await writeFleetRun(path.join(root, FLEET_RUN), {
    name: FLEET_RUN,
    endTs: fleetEnd,
    hours: 1,
    seed: seed + 1,
    scrapeIntervalS: 5,
    metrics: FLEET_METRICS_DEMO,
    stall: true,
  });
  settleMtimes(path.join(root, FLEET_RUN), fleetEnd + 2);
  // Short and sparse (10-s scrapes, the demo's metric list) to keep `npm run demo` start fast.
  const bigEnd = opts.nowS - 20 * 60;
  await writeFleetRun(path.join(root, BIG_FLEET_RUN), {
    name: BIG_FLEET_RUN,
    endTs: bigEnd,
    hours: 1 / 3,
    nodes: BIG_FLEET_NODES,
    seed: seed + 4,
    scrapeIntervalS: 10,
    metrics: FLEET_METRICS_DEMO,
    stall: false,
    finished: true,
  });
  settleMtimes(path.join(root, BIG_FLEET_RUN), bigEnd + 2);
  const offlineEnd = await writeOfflineRun(root, opts.nowS, seed + 2);
  settleMtimes(path.join(root, OFFLINE_RUN), offlineEnd);
  const ablationEnd = await writeAblationRun(root, opts.nowS, seed + 3);
  settleMtimes(path.join(root, ABLATION_RUN), ablationEnd + 1);
  const stamp: DemoStamp = { version: DEMO_GENERATOR_VERSION, seed, generated_at: opts.nowS, runs: [...DEMO_RUNS] };
  fs.writeFileSync(path.join(root, STAMP_FILE), JSON.stringify(stamp, null, 1) + "\n");
  return [...DEMO_RUNS];
}

/**
 * Finished runs must look finished: nothing in them may be newer than their last write
 * (the run list calls a run live from file mtimes). Files with an older simulated mtime
 * (per-step dumps) keep it.
 */
function settleMtimes(dir: string, ts: number): void {
  const when = new Date(ts * 1000);
  const walk = (p: string) => {
    const st = fs.statSync(p);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    if (st.mtimeMs > ts * 1000) fs.utimesSync(p, when, when);
  };
  walk(dir);
}

export function readDemoStamp(root: string): DemoStamp | null {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(root, STAMP_FILE), "utf8")) as Partial<DemoStamp>;
    if (typeof raw.version !== "number" || typeof raw.generated_at !== "number") return null;
    return { version: raw.version, seed: raw.seed ?? DEMO_SEED, generated_at: raw.generated_at, runs: raw.runs ?? [] };
  } catch {
    return null;
  }
}

export type RegenerateReason = "missing" | "version" | "incomplete" | "stale" | null;

/**
 * Why the demo runs under `root` must be (re)generated, or null when they are current:
 * no stamp, another generator version, a run folder gone, or older than `maxAgeS` (the
 * live run would otherwise show a gap of hours before the live steps).
 */
export function demoRegenerateReason(root: string, nowS: number, maxAgeS = 6 * 3600): RegenerateReason {
  const stamp = readDemoStamp(root);
  if (!stamp) return "missing";
  if (stamp.version !== DEMO_GENERATOR_VERSION) return "version";
  if (DEMO_RUNS.some((r) => !fs.existsSync(path.join(root, r)))) return "incomplete";
  if (nowS - stamp.generated_at > maxAgeS) return "stale";
  return null;
}
