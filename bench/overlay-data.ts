/**
 * Bench input for the compare overlay (issue #14: "overlay of 2 runs × 40 metrics × 10k
 * steps drawn ≤ 1 s"): two runs under `<data-dir>/bench/` whose args differ in one key,
 * each with 10,000 steps of 40 scalar metrics in one category (`overlay/m00`…`m39`), so
 * the overlay shows all 40 charts at once. Written once through RunWriter, kept while the
 * stamp matches; independent of the fleet data (regenerating that takes minutes).
 */
import fs from "node:fs";
import path from "node:path";
import { Rng } from "@/lib/demo/prng";
import type { MetricsRecord } from "@/lib/store/format";
import { RunWriter } from "@/lib/store/writer/run-writer";

export const OVERLAY_RUNS = ["overlay-a", "overlay-b"] as const;
export const OVERLAY_METRICS = 40;
export const OVERLAY_STEPS = 10_000;
const STAMP = `overlay-1:${OVERLAY_METRICS}x${OVERLAY_STEPS}`;
const T0 = 1_763_900_000.5;

export async function ensureOverlayRuns(root: string, log: (s: string) => void): Promise<void> {
  const stampFile = path.join(root, "overlay-stamp.txt");
  const fresh = OVERLAY_RUNS.every((r) => fs.existsSync(path.join(root, r, "dashboard", "metrics.jsonl")));
  if (fresh && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === STAMP) return;
  log(`generating the overlay bench runs (${OVERLAY_RUNS.length} × ${OVERLAY_METRICS} metrics × ${OVERLAY_STEPS} steps)…`);
  for (const [i, name] of OVERLAY_RUNS.entries()) {
    const dir = path.join(root, name);
    fs.rmSync(dir, { recursive: true, force: true });
    const writer = await RunWriter.open({
      dashDir: path.join(dir, "dashboard"),
      meta: { run_name: `bench-${name}`, start_ts: T0, args: { lr: 1e-6, rollout_batch_size: 512, kl_coef: i === 0 ? 0.0 : 0.01 } },
    });
    const rng = new Rng(900 + i);
    for (let s0 = 0; s0 < OVERLAY_STEPS; s0 += 500) {
      const recs: MetricsRecord[] = [];
      for (let s = s0; s < Math.min(OVERLAY_STEPS, s0 + 500); s++) {
        const metrics: Record<string, number> = { "rollout/step": s };
        for (let m = 0; m < OVERLAY_METRICS; m++) metrics[`overlay/m${String(m).padStart(2, "0")}`] = Math.round((Math.sin(s / (50 + m)) + rng.normal(0, 0.2) + i * 0.1) * 1e4) / 1e4;
        recs.push({ ts: T0 + s * 6, step_key: "rollout/step", step: s, metrics });
      }
      writer.add("metrics", recs);
      const rep = await writer.flush();
      if (!rep.ok) throw new Error(`overlay bench run ${name}: write failed`);
    }
    await writer.close();
  }
  fs.writeFileSync(stampFile, STAMP);
}
