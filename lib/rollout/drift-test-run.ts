/**
 * Test-only: a run directory with two train steps whose per-token log-probs, loss masks,
 * weight versions and engines are known, written as real `.pt` files (lib/store/pt/write)
 * for the drift / staleness / search tests. The expected values are computed by the tests
 * themselves from `DRIFT_RUN`.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { pyFloat, writePt } from "@/lib/store/pt/write";
import { DemoTokenizer } from "@/lib/demo/tokenizer";
import { ageFiles, makeRunDir, tokensOf, writeTrainShard, type SampleSpec } from "@/lib/store/dumps/test-fixtures";

export interface DriftTestSample {
  spec: SampleSpec & { prompt_len: number };
  engine: string | null;
  log_probs: number[];
  rollout_log_probs: number[];
  loss_mask: number[];
  response: string;
}

const f = Math.fround;

/** Step → samples. Step 2 is two versions behind on one sample (staleness 2). */
export const DRIFT_RUN: Record<number, DriftTestSample[]> = {
  1: [
    {
      // two turns around a tool result (positions 3–4 unmasked)
      spec: { index: 0, group_index: 0, prompt_len: 2, response_length: 6, weight_versions: ["0", "1"] },
      engine: "http://10.0.0.1:15000",
      log_probs: [-0.5, -1, -0.25, -2, -2, -0.75].map(f),
      rollout_log_probs: [-0.5, -0.5, -0.375, -1, -1, -2.75].map(f),
      loss_mask: [1, 1, 1, 0, 0, 1],
      response: "Let me call the weather tool.",
    },
    {
      spec: { index: 1, group_index: 0, prompt_len: 2, response_length: 4, weight_versions: ["1"] },
      engine: "http://10.0.0.2:15000",
      log_probs: [-0.125, -0.25, -3, -0.5].map(f),
      rollout_log_probs: [-0.25, -0.25, -2.5, -0.4375].map(f),
      loss_mask: [1, 1, 1, 1],
      response: "The answer is 42.",
    },
    {
      spec: { index: 2, group_index: 1, prompt_len: 2, response_length: 3, weight_versions: ["1"] },
      engine: null,
      log_probs: [-1, -1.5, -0.0625].map(f),
      rollout_log_probs: [-1.125, -1.25, -0.0625].map(f),
      loss_mask: [1, 0, 1],
      response: "No weather here.",
    },
  ],
  2: [
    {
      spec: { index: 3, group_index: 0, prompt_len: 2, response_length: 5, weight_versions: ["0"] },
      engine: "http://10.0.0.1:15000",
      log_probs: [-0.5, -0.5, -0.5, -0.5, -0.5].map(f),
      rollout_log_probs: [-1.5, -0.5, -0.25, -0.625, -0.5].map(f),
      loss_mask: [1, 1, 1, 1, 1],
      response: "WEATHER report: sunny",
    },
    {
      spec: { index: 4, group_index: 0, prompt_len: 2, response_length: 2, weight_versions: ["2"] },
      engine: "http://10.0.0.2:15000",
      log_probs: [-0.25, -0.75].map(f),
      rollout_log_probs: [-0.25, -1].map(f),
      loss_mask: [1, 1],
      response: "ok",
    },
  ],
};

async function writeRolloutWithMeta(dir: string, rolloutId: number, samples: readonly DriftTestSample[]): Promise<void> {
  const file = path.join(dir, "rollout_data", `${rolloutId}.pt`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writePt(file, {
    rollout_id: rolloutId,
    metadata: {},
    samples: samples.map((s) => ({
      group_index: s.spec.group_index ?? 0,
      index: s.spec.index,
      prompt: `question ${s.spec.index} about the weather`,
      tokens: tokensOf(s.spec),
      response: s.response,
      response_length: s.spec.response_length,
      reward: pyFloat(1),
      loss_mask: s.loss_mask,
      weight_versions: s.spec.weight_versions,
      rollout_log_probs: s.rollout_log_probs.map((x) => pyFloat(x)),
      remove_sample: false,
      status: "completed",
      metadata: s.engine === null ? {} : { engine: s.engine },
      non_generation_time: pyFloat(0),
      spec_info: { spec_accept_token_num: 0, spec_draft_token_num: 0, spec_verify_ct: 0, completion_token_num: 0 },
      prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
    })),
  });
}

/**
 * Write the run (rollout + one train shard per step, aged past the still-writing window).
 * `rolloutLogProbsInRolloutOnly`: the train shards carry no `rollout_log_probs` (the drift
 * falls back to the rollout dump's), and the run gets a tokenizer (the fallback reads the
 * rollout dump's per-token lists, which the join keeps only with token ids).
 */
export async function writeDriftRun(dir?: string, opts: { rolloutLogProbsInRolloutOnly?: boolean } = {}): Promise<string> {
  const root = dir ?? (await makeRunDir("rlboard-drift-"));
  if (opts.rolloutLogProbsInRolloutOnly) new DemoTokenizer(["weather", "tool", "answer"]).writeTo(path.join(root, "tokenizer"));
  for (const [ridS, samples] of Object.entries(DRIFT_RUN)) {
    const rolloutId = Number(ridS);
    await writeRolloutWithMeta(root, rolloutId, samples);
    await writeTrainShard(root, rolloutId, {
      rank: 0,
      rows: samples.map((s) => ({
        sample: s.spec,
        values: opts.rolloutLogProbsInRolloutOnly ? { log_probs: s.log_probs } : { log_probs: s.log_probs, rollout_log_probs: s.rollout_log_probs },
        loss_mask: s.loss_mask,
      })),
      cp: { rank: 0, size: 1 },
    });
  }
  await ageFiles(root);
  return root;
}
