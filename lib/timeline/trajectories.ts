/**
 * Trajectory lanes (docs/api.md 8.12): per-sample lifecycle (attempts, gen/tool segments,
 * status, weight versions) assembled from the `trajectories` event stream. Exported for
 * the rollout `trajectories` endpoint and the lifecycle heatmap.
 */
import type { MetricStore, TrajectoryEvent } from "@/lib/store/telemetry";

export interface TrajectorySegment {
  kind: "gen" | "tool";
  t0: number | null;
  t1: number | null;
  turn: number;
  weight_version: string;
}

export interface TrajectoryAttempt {
  t0: number | null;
  t1: number | null;
}

export interface TrajectoryLane {
  sample_index: number;
  group_index: number;
  first_ts: number;
  last_ts: number;
  segments: TrajectorySegment[];
  attempts: TrajectoryAttempt[];
  status: string;
  versions: number[];
}

const DIGITS = /^[0-9]+$/;

/**
 * The lanes of the samples in `sampleIndices` (all when omitted) over [t0, t1], oldest
 * first. Memoised on the store until the trajectories stream's files change, per kind of
 * caller (a step's samples, or all of them): the step view asks the same step again, and
 * the warm-up's answer for the newest step is the first request's (#20: 8–12 ms of a
 * 20 ms warm request, and the first request after a start paid ~45 ms). The array is
 * frozen: callers share it.
 */
export async function trajectoryLanes(
  store: MetricStore,
  t0: number | null,
  t1: number | null,
  sampleIndices?: Iterable<number> | null,
): Promise<readonly TrajectoryLane[]> {
  await store.trajectories.files();
  const only = sampleIndices ? [...sampleIndices] : null;
  const key = `trajectories:lanes:${only ? "samples" : "all"}`;
  const version = `${store.trajectories.signature}|${t0}|${t1}|${only ? only.join(",") : "*"}`;
  return store.memo(key, version, async () => Object.freeze(await computeLanes(store, t0, t1, only)));
}

async function computeLanes(store: MetricStore, t0: number | null, t1: number | null, sampleIndices: readonly number[] | null): Promise<TrajectoryLane[]> {
  const only = sampleIndices ? new Set(sampleIndices) : null;
  const blocks = await store.trajectories.window(t0, t1);
  const groups = new Map<number, TrajectoryEvent[]>();
  for (const b of blocks)
    for (const ev of b.rows) {
      if ((t0 !== null && ev.ts < t0) || (t1 !== null && ev.ts > t1)) continue;
      if (only && !only.has(ev.sample_index)) continue;
      let g = groups.get(ev.sample_index);
      if (!g) groups.set(ev.sample_index, (g = []));
      g.push(ev);
    }
  const lanes: TrajectoryLane[] = [];
  for (const [sampleIndex, evs] of groups) lanes.push(buildLane(sampleIndex, evs));
  lanes.sort((a, b) => a.first_ts - b.first_ts);
  return lanes;
}

function buildLane(sampleIndex: number, events: TrajectoryEvent[]): TrajectoryLane {
  const evs = [...events].sort((a, b) => a.ts - b.ts);
  const versions = [...new Set(evs.filter((e) => DIGITS.test(e.weight_version)).map((e) => Number(e.weight_version)))].sort(
    (a, b) => a - b,
  );
  const segments: TrajectorySegment[] = [];
  const open = new Map<string, TrajectorySegment>();
  const attempts: TrajectoryAttempt[] = [];
  let attemptT0: number | null = null;
  let status = "";
  for (const ev of evs) {
    switch (ev.kind) {
      case "attempt_start":
        attemptT0 = ev.ts;
        break;
      case "attempt_end":
        attempts.push({ t0: attemptT0, t1: ev.ts });
        attemptT0 = null;
        if (ev.detail !== "") status = ev.detail;
        for (const s of open.values()) {
          s.t1 = ev.ts;
          if (s.weight_version === "") s.weight_version = ev.weight_version;
        }
        open.clear();
        break;
      case "gen_start":
      case "tool_start": {
        const kind = ev.kind === "gen_start" ? "gen" : "tool";
        const seg: TrajectorySegment = { kind, t0: ev.ts, t1: null, turn: ev.turn, weight_version: ev.weight_version };
        segments.push(seg);
        open.set(`${kind}\u0000${ev.turn}`, seg);
        break;
      }
      case "gen_end":
      case "tool_end": {
        const kind = ev.kind === "gen_end" ? "gen" : "tool";
        const k = `${kind}\u0000${ev.turn}`;
        const seg = open.get(k);
        if (seg) {
          open.delete(k);
          seg.t1 = ev.ts;
          seg.weight_version = ev.weight_version || seg.weight_version;
        } else {
          segments.push({ kind, t0: null, t1: ev.ts, turn: ev.turn, weight_version: ev.weight_version });
        }
        break;
      }
    }
  }
  if (attemptT0 !== null) attempts.push({ t0: attemptT0, t1: null });
  const perTurn = segments.some((s) => s.kind === "gen" && s.turn > 0);
  const kept = perTurn ? segments.filter((s) => !(s.kind === "gen" && s.turn < 0)) : segments;
  return {
    sample_index: sampleIndex,
    group_index: evs[0]!.group_index,
    first_ts: evs[0]!.ts,
    last_ts: evs[evs.length - 1]!.ts,
    segments: kept,
    attempts,
    status,
    versions,
  };
}
