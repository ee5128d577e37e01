/**
 * `qwen3-4b-grpo-ablation`: a small finished run whose args snapshot is the Qwen demo's
 * with exactly one key changed (`sglang_mem_fraction_static` 0.85 → 0.9; `wandb_group`
 * names the run), telemetry metrics only — the compare views' single-variable example
 * (README "Comparing runs"). A higher KV-cache fraction: rollouts a little faster, the
 * same rewards.
 */
import path from "node:path";
import { pyFloat } from "@/lib/store/format";
import type { MetricsRecord } from "@/lib/store/format";
import { RunWriter } from "@/lib/store/writer/run-writer";
import { Rng, round } from "./prng";
import { qwenArgs } from "./qwen";

export const ABLATION_RUN = "qwen3-4b-grpo-ablation";
export const ABLATION_KEY = "sglang_mem_fraction_static";
const STEPS = 16;

/** Writes the run; returns the time of its last write (unix s). */
export async function writeAblationRun(root: string, nowS: number, seed: number): Promise<number> {
  const rng = new Rng(seed).fork("ablation");
  const start = Math.floor(nowS - 2 * 3600 - STEPS * 80) + 0.5;
  const writer = await RunWriter.open({
    dashDir: path.join(root, ABLATION_RUN, "dashboard"),
    meta: { run_name: ABLATION_RUN, start_ts: start, args: { ...qwenArgs(), wandb_group: ABLATION_RUN, [ABLATION_KEY]: pyFloat(0.9) } },
  });
  const recs: MetricsRecord[] = [];
  let t = start + 240;
  for (let step = 0; step < STEPS; step++) {
    const rollout = 44 + rng.normal(0, 2.5);
    const train = 30 + rng.normal(0, 1.2);
    t += rollout + train + 1.5;
    const mfu = round(0.305 + rng.normal(0, 0.012) - (step === 0 ? 0.07 : 0), 4);
    recs.push({
      ts: round(t, 3),
      step_key: "rollout/step",
      step,
      metrics: {
        "rollout/raw_reward": round(Math.min(0.95, 0.42 + 0.018 * step + rng.normal(0, 0.03)), 6),
        "rollout/response_lengths": round(610 + 9 * step + rng.normal(0, 25), 3),
        "rollout/truncated": round(Math.max(0, 0.06 + rng.normal(0, 0.015)), 6),
        "perf/rollout_time": round(rollout, 4),
        "perf/train_time": round(train, 4),
        "perf/step_time": round(rollout + train + 1.5, 4),
        "perf/wait_time_ratio": round(rollout / (rollout + train + 1.5), 6),
        "perf/actor_train_mfu": mfu,
        "perf/mfu_peak_tflops": pyFloat(989),
        "rollout/step": step,
      },
    });
  }
  writer.add("metrics", recs);
  await writer.close();
  return t;
}
