/**
 * The timeline's first screen, read ahead for the server's warm-up (lib/server/warmup.ts):
 * the view opens on the newest MAX_WINDOW_S of a run (lib/charts/timeline-viewport.ts
 * `latestViewport`) with its GPU lanes, phases and the default overlay's engine series
 * (TIMELINE_OVERLAYS[0], per engine, not per DP rank). Their blocks are adopted from the
 * data dir's binary cache only (`PartitionedStream.cachedWindow`): nothing is parsed, so a
 * run without a cache yet, or the open newest hour of a live one, costs nothing here and is
 * read by the first request, as without a warm-up. The blocks are the store's own, shared
 * with the routes (the store is one per run and process: lib/server/runs/context.ts).
 */
import { TIMELINE_OVERLAYS } from "@/lib/contracts/timeline-view";
import { blockParts, type MetricStore } from "@/lib/store/telemetry";
import { MAX_WINDOW_S } from "@/lib/timeline/window";

/**
 * GPU rows whose per-lane util totals the warm-up takes (one pass over them): the 64-GPU
 * bench run's 4 h window is 0.9 M rows; a 1024-GPU run's 3.7 M rows an hour.
 */
export const WARM_TOTALS_MAX_ROWS = 4_000_000;

/** Blocks adopted per stream (what the warm-up loaded; for tests and logs). */
export interface WarmedWindow {
  gpuUtil: number;
  phases: number;
  engine: number;
}

export async function warmTimelineWindow(store: MetricStore): Promise<WarmedWindow> {
  const range = await store.timeRange();
  if (!range) return { gpuUtil: 0, phases: 0, engine: 0 };
  const t1 = range[1];
  const t0 = Math.max(range[0], t1 - MAX_WINDOW_S);
  const [gpu, phases, engine] = await Promise.all([
    store.gpuUtil.cachedWindow(t0, t1),
    store.phases.cachedWindow(t0, t1),
    store.engine.cachedWindow(t0, t1),
  ]);
  const metricId = store.dicts.metrics.lookup(TIMELINE_OVERLAYS[0].metric);
  if (metricId !== undefined) await Promise.all(engine.filter((b) => b.metricRange(metricId) !== null).map((b) => blockParts(store.dicts, b, metricId, false)));
  // The blocks' per-lane util totals (the outliers proposal over the window reads them), as
  // far as WARM_TOTALS_MAX_ROWS goes, newest first.
  let rows = 0;
  for (const b of [...gpu].reverse()) {
    rows += b.rows;
    if (rows > WARM_TOTALS_MAX_ROWS) break;
    b.utilTotals();
  }
  return { gpuUtil: gpu.length, phases: phases.length, engine: engine.length };
}
