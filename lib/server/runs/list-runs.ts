import type { GetRunsResponse, RunSummary } from "@/lib/contracts/runs";
import { runArgs, type ArgCell } from "@/lib/server/runs/run-args";
import { getDb } from "@/lib/server/db";
import { allAnnotations, type RunAnnotation } from "@/lib/server/runs/annotations";
import { cachedRunHealth, refreshRunHealth } from "@/lib/health/server";
import { getRegistry } from "@/lib/server/runs/context";
import type { ScannedRun } from "@/lib/server/runs/scan";

/** The judged part of a run's row (docs/api.md 9.5.4); nulls until the run was judged. */
function health(id: string): Pick<RunSummary, "state" | "alarm" | "alarms" | "last_step"> {
  const h = cachedRunHealth(id);
  return { state: h?.state ?? null, alarm: h?.alarm ?? null, alarms: h?.alarms ?? 0, last_step: h?.last_step ?? null };
}

export function toRunSummary(
  r: ScannedRun,
  extra: { args: Record<string, ArgCell> | null; annotation?: RunAnnotation } = { args: null },
): RunSummary {
  return {
    id: r.id,
    name: r.name,
    path: r.relPath,
    first_ts: r.firstTs,
    last_ts: r.lastTs,
    steps: r.steps,
    live: r.live,
    capabilities: { has_timeline: r.hasTimeline, has_dumps: r.hasDumps, has_trajectories: r.hasTrajectories },
    args: extra.args,
    tags: extra.annotation?.tags ?? [],
    notes: extra.annotation?.notes ?? "",
    ...health(r.id),
  };
}

/** The lab's run list, newest activity first; `q` filters by name, id or path (case-insensitive). */
export function listRuns(opts: { refresh?: boolean; q?: string } = {}): GetRunsResponse {
  const registry = getRegistry();
  const q = opts.q?.trim().toLowerCase();
  const notes = allAnnotations(getDb());
  const runs = registry
    .list({ refresh: opts.refresh })
    .filter((r) => !q || r.name.toLowerCase().includes(q) || r.id.toLowerCase().includes(q) || r.relPath.toLowerCase().includes(q))
    .map((r) => toRunSummary(r, { args: runArgs(r.realDir), annotation: notes.get(r.id) }));
  return { mode: registry.mode.kind, runs };
}

/**
 * The run list as it is now (cached states), and the stale states judged in the
 * background for the next request: a page render never waits on judging.
 */
export function listRunsJudging(opts: { q?: string } = {}): GetRunsResponse {
  const now = listRuns(opts);
  void refreshRunHealth(now.runs.map((r) => ({ id: r.id, key: String(r.last_ts) })));
  return now;
}

/**
 * `listRuns` after judging the listed runs whose state is stale (docs/api.md 9.5.4; within
 * a time budget — the rest keep their last state, or null, until a later request).
 */
export async function listRunsJudged(opts: { refresh?: boolean; q?: string } = {}): Promise<GetRunsResponse> {
  const first = listRuns(opts);
  await refreshRunHealth(first.runs.map((r) => ({ id: r.id, key: String(r.last_ts) })));
  return listRuns({ q: opts.q });
}
