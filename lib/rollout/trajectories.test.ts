/**
 * The trajectories answer is one frozen object per lanes array for the whole process, so
 * its JSON text is written once (lib/api/json.ts) even when the warm-up's bundle of this
 * module computed it and a route's bundle serves it (lib/server/warmup.ts).
 */
import { describe, expect, it, vi } from "vitest";
import type { DumpReader } from "@/lib/store/dumps";
import { getRolloutTrajectories, MAX_ANATOMY_WINDOW_S, type TrajectoryTimeline } from "@/lib/rollout/trajectories";
import type { TrajectoryLane } from "@/lib/timeline/trajectories";

/** A timeline whose lanes are one kept (frozen) array per call, as the store's memo hands out. */
function timeline(lanes: readonly TrajectoryLane[]): TrajectoryTimeline {
  return { bubbles: async () => [{ step: 3, ts: 20_000 }], timeRange: async () => [0, 30_000], lanes: async () => lanes };
}
const noDumps = {} as DumpReader; // an explicit sample index reads no dump

describe("getRolloutTrajectories", () => {
  it("answers the same frozen object for the same kept lanes, in every instance of the module", async () => {
    const lanes = Object.freeze([] as TrajectoryLane[]);
    const a = await getRolloutTrajectories(noDumps, timeline(lanes), 3, 0);
    expect(a).toEqual({ lanes, consume_ts: 20_000, t0: 20_000 - MAX_ANATOMY_WINDOW_S });
    expect(Object.isFrozen(a)).toBe(true);
    expect(await getRolloutTrajectories(noDumps, timeline(lanes), 3, 0)).toBe(a);
    vi.resetModules();
    const other = await import("@/lib/rollout/trajectories");
    expect(other.getRolloutTrajectories).not.toBe(getRolloutTrajectories);
    expect(await other.getRolloutTrajectories(noDumps, timeline(lanes), 3, 0)).toBe(a);
    // other lanes (files changed) are another answer
    expect(await other.getRolloutTrajectories(noDumps, timeline(Object.freeze([] as TrajectoryLane[])), 3, 0)).not.toBe(a);
  });
});
