"use client";

/**
 * The GPU lanes' data and model: phases, GPU series, processes and the overlay's engine
 * series for the fetched window, and paint gating — the lanes are drawn once their
 * inputs have all answered. While one of them is still on its first request the others
 * wait, so 32 lanes are painted once, not once per answer. The page of rows a scroll
 * reaches next is asked ahead, once this page has answered.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { prepareLanes, prepareProcessTracks, type PrepareLanesInput } from "@/lib/charts/prepare-lanes";
import { laneQueries, useEngineSeries, useGpu, usePhases, useProcesses, type Win } from "@/lib/client/telemetry-queries";

export const GPU_MAX_POINTS = 4000;

/** While `hold` is true the last value seen with `hold` false is returned. */
export function useHeldWhile<T>(hold: boolean, value: T): T {
  const [held, setHeld] = useState(value);
  if (!hold && held !== value) setHeld(value);
  return hold ? held : value;
}

type Query = { data: unknown; isPending: boolean; isError: boolean };
const firstLoad = (q: Query, on = true) => on && q.data === undefined && q.isPending && !q.isError;

export function useLaneModel(
  runId: string,
  fetched: Win,
  shown: PrepareLanesInput["lanes"],
  dataLanes: string,
  windows: PrepareLanesInput["windows"],
  ovMetric: string | null,
  /** the page of rows a scroll reaches next: asked once this page has its data (null: none) */
  aheadLanes: string | null = null,
) {
  const hasLanes = shown.length > 0;
  const phases = usePhases(runId, fetched, dataLanes, hasLanes);
  const gpu = useGpu(runId, fetched, dataLanes, GPU_MAX_POINTS, hasLanes);
  const procs = useProcesses(runId, fetched, dataLanes, hasLanes);
  const engine = useEngineSeries(runId, ovMetric, { perDpRank: false, win: fetched, maxPoints: GPU_MAX_POINTS, follow: false });

  // Ask the next page's lanes once this page's have answered, so scrolling on finds them
  // in the cache instead of waiting for the server (a 1024-GPU day: ~1.2 s per page).
  const queryClient = useQueryClient();
  const settled = hasLanes && phases.data !== undefined && gpu.data !== undefined && !phases.isFetching && !gpu.isFetching;
  const { t0, t1 } = fetched;
  useEffect(() => {
    if (!settled || aheadLanes === null) return;
    const win = { t0, t1 };
    void queryClient.prefetchQuery(laneQueries.phases(runId, win, aheadLanes));
    void queryClient.prefetchQuery(laneQueries.gpu(runId, win, aheadLanes, GPU_MAX_POINTS));
    void queryClient.prefetchQuery(laneQueries.processes(runId, win, aheadLanes));
  }, [queryClient, settled, aheadLanes, runId, t0, t1]);

  const holding = hasLanes && (firstLoad(phases) || firstLoad(gpu) || firstLoad(engine, ovMetric !== null));
  const answers = useMemo(() => ({ phases: phases.data, gpu: gpu.data, engine: engine.data }), [phases.data, gpu.data, engine.data]);
  const held = useHeldWhile(holding, answers);
  const model = useMemo(
    () => prepareLanes({ lanes: shown, phases: held.phases, gpu: held.gpu, windows, overlayMetric: ovMetric, engine: ovMetric ? held.engine : undefined }),
    [shown, held, windows, ovMetric],
  );
  const processTracks = useMemo(() => prepareProcessTracks(procs.data?.processes), [procs.data]);
  return {
    model,
    processTracks,
    hasLanes,
    /** the first failing input, if any */
    error: phases.error ?? gpu.error ?? engine.error,
    fetching: phases.isFetching || gpu.isFetching,
  };
}
