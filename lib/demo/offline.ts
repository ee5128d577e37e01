/**
 * `offline-dumps-only`: a run recorded with `--dump-details` but without the dashboard
 * (no `dashboard/` at all), from before the parquet mirror existed: rollout and train
 * `.pt` dumps plus a tokenizer only. Single-turn GRPO on math word problems with string
 * prompts (no conversation sidecar). The Metrics view falls back to the `dump/*` step
 * aggregates and the token view rebuilds the mirror from the `.pt`.
 *
 * The last step went wrong in a way only the dumps show: half its prompts ran with a
 * 48-token response cap, so those samples are truncated, score 0 and their groups have zero
 * reward std — the rollout advisories (docs/api.md 10.3) fire on a run without telemetry.
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
const CAPPED_GROUPS = 2;
const LAST_STEP_CAP = 48;

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
  for (let rolloutId = 0; rolloutId < STEPS; rolloutId++) {
    const srng = rng.fork(`step${rolloutId}`);
    const samples: DemoSample[] = [];
    for (let g = 0; g < GROUPS; g++) {
      for (let j = 0; j < N; j++) {
        const conv = makeConversation(srng.fork(`c${g}.${j}`), { pCorrect: 0.35 + 0.08 * rolloutId, family: "math" });
        samples.push(
          plainSample(srng.fork(`s${g}.${j}`), tok, conv, {
            index: index++,
            groupIndex: rolloutId * GROUPS + g,
            maxResponseLen: rolloutId === STEPS - 1 && g < CAPPED_GROUPS ? LAST_STEP_CAP : j === 7 && g === 1 ? 40 : 1024,
            versionOfTurn: () => String(rolloutId),
          }),
        );
      }
    }
    const writtenAt = t0 + rolloutId * STEP_S + 140;
    await writeRolloutDump({ runDir, rolloutId, evaluation: false, samples, writtenAt, mirror: false, sidecar: false });
    await writeTrainDumps(srng.fork("train"), { runDir, rolloutId, samples, layout: { dp: 2, tp: 1 }, writtenAt: writtenAt + 2 });
    last = writtenAt + 2.1;
  }
  return last;
}
