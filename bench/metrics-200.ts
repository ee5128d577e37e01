/**
 * Bench input for the Metrics view with 200 metrics (issue #15: "only the charts on screen
 * fetch and draw: first screen drawn ≤ 1 s, scrolling keeps frames ≤ 16 ms"): one run under
 * `<data-dir>/bench/` with 2,000 steps of 200 scalar metrics in one category
 * (`wide/k000`…`wide/k199`), so the page holds 200 cards. Written once through RunWriter,
 * kept while the stamp matches.
 */
import fs from "node:fs";
import path from "node:path";
import { Rng } from "@/lib/demo/prng";
import type { MetricsRecord } from "@/lib/store/format";
import { RunWriter } from "@/lib/store/writer/run-writer";

export const WIDE_RUN = "metrics-200";
export const WIDE_CATEGORY = "wide";
export const WIDE_METRICS = 200;
export const WIDE_STEPS = 2_000;
const STAMP = `wide-1:${WIDE_METRICS}x${WIDE_STEPS}`;
const T0 = 1_763_950_000.5;

export async function ensureWideRun(root: string, log: (s: string) => void): Promise<void> {
  const dir = path.join(root, WIDE_RUN);
  const stampFile = path.join(root, "metrics-200-stamp.txt");
  if (fs.existsSync(path.join(dir, "dashboard", "metrics.jsonl")) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === STAMP) return;
  log(`generating the 200-metric bench run (${WIDE_METRICS} metrics × ${WIDE_STEPS} steps)…`);
  fs.rmSync(dir, { recursive: true, force: true });
  const writer = await RunWriter.open({ dashDir: path.join(dir, "dashboard"), meta: { run_name: "bench-metrics-200", start_ts: T0, args: { lr: 1e-6 } } });
  const rng = new Rng(2200);
  for (let s0 = 0; s0 < WIDE_STEPS; s0 += 250) {
    const recs: MetricsRecord[] = [];
    for (let s = s0; s < Math.min(WIDE_STEPS, s0 + 250); s++) {
      const metrics: Record<string, number> = { "rollout/step": s };
      for (let m = 0; m < WIDE_METRICS; m++) metrics[`${WIDE_CATEGORY}/k${String(m).padStart(3, "0")}`] = Math.round((Math.cos(s / (30 + m)) * (1 + m / 50) + rng.normal(0, 0.15)) * 1e4) / 1e4;
      recs.push({ ts: T0 + s * 9, step_key: "rollout/step", step: s, metrics });
    }
    writer.add("metrics", recs);
    const rep = await writer.flush();
    if (!rep.ok) throw new Error(`metrics-200 bench run: write failed`);
  }
  await writer.close();
  fs.writeFileSync(stampFile, STAMP);
}
