/**
 * `offline-dumps-only`: a run recorded with `--dump-details` but without the dashboard
 * (no `dashboard/` at all), from before the parquet mirror existed: rollout and train
 * `.pt` dumps plus a tokenizer only. Single-turn GRPO on math word problems with string
 * prompts (no conversation sidecar). The Metrics view falls back to the `dump/*` step
 * aggregates and the token view rebuilds the mirror from the `.pt`.
 */
import path from "node:path";
import { plainSample, writeRolloutDump, writeTrainDumps, type DemoSample } from "./dumps";
import { Rng } from "./prng";
import { corpusWords, makeConversation } from "./text";
import { DemoTokenizer } from "./tokenizer";

export const OFFLINE_RUN = "offline-dumps-only";
const STEPS = 4;
const GROUPS = 4;
const N = 8;
const STEP_S = 212;

/** Writes the run; returns the time of its last write (unix s). */
export async function writeOfflineRun(root: string, nowS: number, seed: number): Promise<number> {
  const runDir = path.join(root, OFFLINE_RUN);
  const rng = new Rng(seed).fork("offline");
  const tok = new DemoTokenizer(corpusWords());
  tok.writeTo(path.join(runDir, "tokenizer"));
  // The run finished a while ago.
  const t0 = nowS - 3 * 3600 - STEPS * STEP_S;
  let index = 0;
  let last = t0;
  for (let rid = 0; rid < STEPS; rid++) {
    const srng = rng.fork(`step${rid}`);
    const samples: DemoSample[] = [];
    for (let g = 0; g < GROUPS; g++) {
      for (let j = 0; j < N; j++) {
        const conv = makeConversation(srng.fork(`c${g}.${j}`), { pCorrect: 0.35 + 0.08 * rid, family: "math" });
        samples.push(
          plainSample(srng.fork(`s${g}.${j}`), tok, conv, {
            index: index++,
            groupIndex: rid * GROUPS + g,
            maxResponseLen: j === 7 && g === 1 ? 40 : 1024,
            versionOfTurn: () => String(rid),
          }),
        );
      }
    }
    const writtenAt = t0 + rid * STEP_S + 140;
    await writeRolloutDump({ runDir, rid, evaluation: false, samples, writtenAt, mirror: false, sidecar: false });
    await writeTrainDumps(srng.fork("train"), { runDir, rid, samples, layout: { dp: 2, tp: 1 }, writtenAt: writtenAt + 2 });
    last = writtenAt + 2.1;
  }
  return last;
}
