/**
 * Batch anatomy of the step that consumed a rollout (docs/api.md 9.2 `/trajectories`):
 * the lifecycle lanes of its samples over the 4 h before the step's consume time.
 */
import type { MetricStore } from "@/lib/store/telemetry";
import type { DumpReader } from "@/lib/store/dumps";
import { bubbles } from "@/lib/timeline/metrics";
import { trajectoryLanes, type TrajectoryLane } from "@/lib/timeline/trajectories";

/** Look-back window before the consume time (= MAX_WINDOW_S of the reference). */
export const MAX_ANATOMY_WINDOW_S = 14400;

/** What the endpoint needs from the telemetry side (bubbles 8.11, lanes 8.12). */
export interface TrajectoryTimeline {
  bubbles(): Promise<readonly { step: number | null; ts: number }[]>;
  timeRange(): Promise<readonly [number, number] | null>;
  lanes(t0: number | null, t1: number | null, sampleIndices: readonly number[]): Promise<readonly TrajectoryLane[]>;
}

export function storeTimeline(store: MetricStore): TrajectoryTimeline {
  return {
    bubbles: () => bubbles(store),
    timeRange: () => store.timeRange(),
    lanes: (t0, t1, indices) => trajectoryLanes(store, t0, t1, indices),
  };
}

export interface RolloutTrajectories {
  lanes: readonly TrajectoryLane[];
  consume_ts: number | null;
  t0: number | null;
}

/**
 * One frozen answer per lanes array (the memoised lanes of one window and sample set,
 * trajectoryLanes): the same object while the files are unchanged, so the API layer
 * writes its JSON text once (keptAnswerResponse, lib/api/json.ts). One table per process,
 * like the lanes (kept by the store), not per module instance: the warm-up's bundle of
 * this module is not the routes' (lib/server/warmup.ts).
 */
const g = globalThis as unknown as { __rlboardTrajectoryAnswers?: WeakMap<readonly TrajectoryLane[], Readonly<RolloutTrajectories>> };
const answers = (g.__rlboardTrajectoryAnswers ??= new WeakMap<readonly TrajectoryLane[], Readonly<RolloutTrajectories>>());

export async function getRolloutTrajectories(
  dumps: DumpReader,
  timeline: TrajectoryTimeline,
  rolloutId: number,
  sampleIndex?: number,
): Promise<RolloutTrajectories> {
  // An explicit sample index needs no summary load and no existence check.
  const indices = sampleIndex !== undefined ? [sampleIndex] : await dumps.trajectoryIndices(rolloutId);
  const bubble = (await timeline.bubbles()).find((b) => b.step === rolloutId);
  const consumeTs = bubble ? bubble.ts : ((await timeline.timeRange())?.[1] ?? null);
  const t0 = consumeTs === null ? null : consumeTs - MAX_ANATOMY_WINDOW_S;
  const lanes = await timeline.lanes(t0, consumeTs, indices);
  let answer = answers.get(lanes);
  if (!answer || answer.consume_ts !== consumeTs || answer.t0 !== t0) {
    answer = Object.freeze({ lanes, consume_ts: consumeTs, t0 });
    if (Object.isFrozen(lanes)) answers.set(lanes, answer);
  }
  return answer;
}
