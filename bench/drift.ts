/**
 * Drift bench rows (issue #16, docs/bench.md): `GET /api/rollout/{id}/drift` as the route
 * computes it (lib/rollout/drift.ts `getRolloutDriftView`, by=position, defaults) over the
 * bench's 512-sample agentic step (bench/data.ts `dumps/`, up to 8k tokens a sample).
 *  - uncachedMs: a fresh reader and an empty cache dir — rollout dump, train shards, the
 *    two-field token join, the summary (staleness) and the answer all computed;
 *  - diskCachedMs: median over `repeat` fresh readers on that cache dir (a new process's
 *    first request: answer and summary come from the cache files);
 *  - cachedMs: median over `repeat` further requests of one reader (memory hit; the
 *    step's source stamps are still checked).
 * Targets: uncached ≤ 500 ms, cached ≤ 50 ms.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openDumpReader } from "@/lib/store/dumps";
import { DRIFT_DEFAULTS, getRolloutDriftView } from "@/lib/rollout/drift";
import { median } from "./stats";

export interface DriftBench {
  uncachedMs: number;
  diskCachedMs: number;
  cachedMs: number;
  tokens: number;
  samples: number;
}


const QUERY = { by: "position" as const, bins: DRIFT_DEFAULTS.bins, clip_lo: DRIFT_DEFAULTS.clip_lo, clip_hi: DRIFT_DEFAULTS.clip_hi, after_tool: DRIFT_DEFAULTS.after_tool, eval: false };

/** `benchDrift(data.dumpsDir, DUMP_RID, 10)` — `cacheDir` defaults to a fresh temp dir (removed after). */
export async function benchDrift(dumpsDir: string, rolloutId: number, repeat = 10, cacheDir?: string): Promise<DriftBench> {
  const dir = cacheDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), "rlboard-bench-drift-")));
  await fs.rm(dir, { recursive: true, force: true });
  try {
    const cold = openDumpReader(dumpsDir, { cacheDir: dir });
    let t = performance.now();
    const first = await getRolloutDriftView(cold, rolloutId, QUERY);
    const uncachedMs = performance.now() - t;
    const mem: number[] = [];
    for (let i = 0; i < repeat; i++) {
      t = performance.now();
      await getRolloutDriftView(cold, rolloutId, QUERY);
      mem.push(performance.now() - t);
    }
    await cold.close();
    const disk: number[] = [];
    for (let i = 0; i < repeat; i++) {
      const r = openDumpReader(dumpsDir, { cacheDir: dir });
      t = performance.now();
      await getRolloutDriftView(r, rolloutId, QUERY);
      disk.push(performance.now() - t);
      await r.close();
    }
    return { uncachedMs, diskCachedMs: median(disk), cachedMs: median(mem), tokens: first.tokens, samples: first.samples };
  } finally {
    if (!cacheDir) await fs.rm(dir, { recursive: true, force: true });
  }
}
