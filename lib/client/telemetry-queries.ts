/**
 * react-query hooks for the telemetry API (Metrics and Compute Utilization views).
 *
 * * Every key starts with ["telemetry", runId] so runs never mix and a run's cache can be
 *   dropped at once.
 * * Follow mode (meta.mode == "follow") polls every 5 s. Structural sharing keeps the same
 *   object when an answer did not change, so charts compare by identity and repaint only
 *   on real changes.
 * * Window queries keep the previous answer while the next window loads (no blank flash
 *   during pan/zoom).
 * * Retry policy comes from the shared QueryClient: 503 only.
 */
import { keepPreviousData, queryOptions, useQueries, useQuery } from "@tanstack/react-query";
import type {
  AdvisoryResponse,
  BubblesResponse,
  EngineSeriesResponse,
  FleetResponse,
  HeatmapHeader,
  Meta,
  MetricsResponse,
  OutliersResponse,
  ProcessesResponse,
  TopologyResponse,
} from "@/lib/charts/api-shapes";
import { decodeFrame, decodeGpuFrame, decodePhaseFrame } from "@/lib/contracts/binary";
import type { GetTimelineLanesResponse } from "@/lib/contracts/timeline-lanes";
import { apiBinary, apiJson } from "@/lib/client/fetcher";

export const FOLLOW_POLL_MS = 5_000;

type Params = Record<string, string | number | boolean | null | undefined>;

/** `/api/<path>?run=<id>&…` (multi-run mode needs `run=` on every call). */
export function telemetryUrl(runId: string, path: string, params: Params = {}): string {
  const sp = new URLSearchParams({ run: runId });
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") sp.set(k, String(v));
  return `/api/${path}?${sp.toString()}`;
}

/**
 * The URLs of the timeline's window queries. The hooks below fetch exactly these, and the
 * timeline's server render preloads them (`<link rel=preload as=fetch>`), so the browser
 * asks for the data while it is still loading the page's JavaScript.
 */
export const timelineUrls = {
  phases: (runId: string, win: Win, lanes: string) => telemetryUrl(runId, "timeline/phases", { t0: win.t0, t1: win.t1, lanes, format: "bin" }),
  gpu: (runId: string, win: Win, lanes: string, maxPoints: number) =>
    telemetryUrl(runId, "timeline/gpu", { t0: win.t0, t1: win.t1, lanes, max_points: maxPoints, format: "bin" }),
  processes: (runId: string, win: Win, lanes: string) => telemetryUrl(runId, "timeline/gpu_processes", { t0: win.t0, t1: win.t1, lanes }),
  engine: (runId: string, metric: string, maxPoints: number, perDpRank: boolean, win: Win | null) =>
    telemetryUrl(runId, "timeline/engine_series", { metric, max_points: maxPoints, per_dp_rank: perDpRank, t0: win?.t0, t1: win?.t1 }),
  heatmap: (runId: string, metric: string, win: Win | null, xBuckets: number, lanes: string | null) =>
    telemetryUrl(runId, "timeline/heatmap", { metric, t0: win?.t0, t1: win?.t1, x_buckets: xBuckets, lanes }),
  bubbles: (runId: string) => telemetryUrl(runId, "timeline/bubbles"),
  advisory: (runId: string) => telemetryUrl(runId, "advisory"),
};

export interface Win {
  t0: number;
  t1: number;
}

/** Round window bounds to ms so float noise does not make new cache keys. */
function w(win: Win | null): [number, number] | null {
  return win ? [Math.round(win.t0 * 1000) / 1000, Math.round(win.t1 * 1000) / 1000] : null;
}

export const telemetryKeys = {
  all: (runId: string) => ["telemetry", runId] as const,
  meta: (runId: string) => ["telemetry", runId, "meta"] as const,
  metrics: (runId: string, axis: string, keys: readonly string[]) => ["telemetry", runId, "metrics", axis, keys.join(",")] as const,
  engine: (runId: string, metric: string, perDpRank: boolean, win: Win | null, maxPoints: number) =>
    ["telemetry", runId, "engine", metric, perDpRank, w(win), maxPoints] as const,
  topology: (runId: string) => ["telemetry", runId, "topology"] as const,
  bubbles: (runId: string) => ["telemetry", runId, "bubbles"] as const,
  advisory: (runId: string) => ["telemetry", runId, "advisory"] as const,
  phases: (runId: string, win: Win, lanes: string) => ["telemetry", runId, "phases", w(win), lanes] as const,
  gpu: (runId: string, win: Win, lanes: string, maxPoints: number) => ["telemetry", runId, "gpu", w(win), lanes, maxPoints] as const,
  processes: (runId: string, win: Win, lanes: string) => ["telemetry", runId, "processes", w(win), lanes] as const,
  heatmap: (runId: string, metric: string, win: Win | null, xBuckets: number, lanes: string | null) =>
    ["telemetry", runId, "heatmap", metric, w(win), xBuckets, lanes] as const,
  fleet: (runId: string, win: Win | null, xBuckets: number) => ["telemetry", runId, "fleet", w(win), xBuckets] as const,
  resolve: (runId: string, lanes: string, at: number | null) => ["telemetry", runId, "resolve", lanes, at] as const,
  outliers: (runId: string, criterion: string) => ["telemetry", runId, "outliers", criterion] as const,
};

const poll = (follow: boolean) => (follow ? FOLLOW_POLL_MS : false);

export function useMeta(runId: string, initial?: Meta | null) {
  return useQuery({
    queryKey: telemetryKeys.meta(runId),
    queryFn: () => apiJson<Meta>(telemetryUrl(runId, "meta")),
    initialData: initial ?? undefined,
    refetchInterval: (q) => (q.state.data?.mode === "follow" ? FOLLOW_POLL_MS : false),
    // keep polling in the background: a live badge must turn stale even in another tab
    refetchIntervalInBackground: true,
  });
}

export function useMetricSeries(runId: string, axis: string, keys: readonly string[], follow: boolean) {
  return useQuery({
    queryKey: telemetryKeys.metrics(runId, axis, keys),
    queryFn: () => apiJson<MetricsResponse>(telemetryUrl(runId, "metrics", { keys: keys.join(","), x: axis })),
    enabled: keys.length > 0,
    refetchInterval: poll(follow),
    placeholderData: keepPreviousData,
  });
}

/** One request per step axis (spec §2.3), all in parallel. */
export function useMetricGroups(runId: string, groups: readonly (readonly [string, readonly string[]])[], follow: boolean) {
  return useQueries({
    queries: groups.map(([axis, keys]) => ({
      queryKey: telemetryKeys.metrics(runId, axis, keys),
      queryFn: () => apiJson<MetricsResponse>(telemetryUrl(runId, "metrics", { keys: keys.join(","), x: axis })),
      refetchInterval: poll(follow),
      placeholderData: keepPreviousData,
    })),
  });
}

/** One engine-series request per chart of the sglang category, whole run, all in parallel. */
export function useEngineCharts(runId: string, metrics: readonly string[], perDpRank: boolean, follow: boolean, maxPoints = 1000) {
  return useQueries({
    queries: metrics.map((metric) => ({
      queryKey: telemetryKeys.engine(runId, metric, perDpRank, null, maxPoints),
      queryFn: () =>
        apiJson<EngineSeriesResponse>(telemetryUrl(runId, "timeline/engine_series", { metric, max_points: maxPoints, per_dp_rank: perDpRank })),
      refetchInterval: poll(follow),
      placeholderData: keepPreviousData,
    })),
  });
}

export function useEngineSeries(
  runId: string,
  metric: string | null,
  opts: { perDpRank: boolean; win: Win | null; maxPoints: number; follow: boolean; enabled?: boolean },
) {
  return useQuery({
    queryKey: telemetryKeys.engine(runId, metric ?? "", opts.perDpRank, opts.win, opts.maxPoints),
    queryFn: () =>
      apiJson<EngineSeriesResponse>(timelineUrls.engine(runId, metric ?? "", opts.maxPoints, opts.perDpRank, opts.win)),
    enabled: metric !== null && (opts.enabled ?? true),
    refetchInterval: opts.win ? false : poll(opts.follow),
    placeholderData: keepPreviousData,
  });
}

export function useTopology(runId: string, follow: boolean, initial?: TopologyResponse | null) {
  return useQuery({
    queryKey: telemetryKeys.topology(runId),
    initialData: initial ?? undefined,
    queryFn: () => apiJson<TopologyResponse>(telemetryUrl(runId, "timeline/topology")),
    refetchInterval: poll(follow),
  });
}

export function useBubbles(runId: string, follow: boolean) {
  return useQuery({
    queryKey: telemetryKeys.bubbles(runId),
    queryFn: () => apiJson<BubblesResponse>(timelineUrls.bubbles(runId)),
    refetchInterval: poll(follow),
  });
}

export function useAdvisory(runId: string, follow: boolean) {
  return useQuery({
    queryKey: telemetryKeys.advisory(runId),
    queryFn: () => apiJson<AdvisoryResponse>(timelineUrls.advisory(runId)),
    refetchInterval: poll(follow),
  });
}

/**
 * The lane rows' window queries (key and fetch), shared by the hooks below and by the
 * timeline's prefetch of the page of rows a scroll reaches next.
 */
export const laneQueries = {
  phases: (runId: string, win: Win, lanes: string) =>
    queryOptions({
      queryKey: telemetryKeys.phases(runId, win, lanes),
      // the binary column frame: ~21 k intervals of a 32-lane window without an object each
      queryFn: async () => decodePhaseFrame(await apiBinary(timelineUrls.phases(runId, win, lanes))),
    }),
  gpu: (runId: string, win: Win, lanes: string, maxPoints: number) =>
    queryOptions({
      queryKey: telemetryKeys.gpu(runId, win, lanes, maxPoints),
      // the binary column frame: no number formatting on the server, no JSON parse here
      queryFn: async () => decodeGpuFrame(await apiBinary(timelineUrls.gpu(runId, win, lanes, maxPoints))),
    }),
  processes: (runId: string, win: Win, lanes: string) =>
    queryOptions({
      queryKey: telemetryKeys.processes(runId, win, lanes),
      queryFn: () => apiJson<ProcessesResponse>(timelineUrls.processes(runId, win, lanes)),
    }),
};

const NO_WIN: Win = { t0: 0, t1: 0 };

export function usePhases(runId: string, win: Win | null, lanes: string, enabled = true) {
  return useQuery({ ...laneQueries.phases(runId, win ?? NO_WIN, lanes), enabled: enabled && win !== null, placeholderData: keepPreviousData });
}

export function useGpu(runId: string, win: Win | null, lanes: string, maxPoints: number, enabled = true) {
  return useQuery({ ...laneQueries.gpu(runId, win ?? NO_WIN, lanes, maxPoints), enabled: enabled && win !== null, placeholderData: keepPreviousData });
}

export function useProcesses(runId: string, win: Win | null, lanes: string, enabled = true) {
  return useQuery({ ...laneQueries.processes(runId, win ?? NO_WIN, lanes), enabled: enabled && win !== null, placeholderData: keepPreviousData });
}

export interface HeatmapData {
  header: HeatmapHeader;
  matrix: Uint8Array;
}

export async function fetchHeatmap(runId: string, metric: string, win: Win | null, xBuckets: number, lanes: string | null): Promise<HeatmapData> {
  const buf = await apiBinary(timelineUrls.heatmap(runId, metric, win, xBuckets, lanes));
  const f = decodeFrame<HeatmapHeader>(buf);
  return { header: f.header, matrix: f.payload };
}

export function useHeatmap(runId: string, metric: string, win: Win | null, xBuckets: number, opts: { enabled: boolean; follow: boolean }) {
  return useQuery({
    queryKey: telemetryKeys.heatmap(runId, metric, win, xBuckets, null),
    queryFn: () => fetchHeatmap(runId, metric, win, xBuckets, null),
    enabled: opts.enabled,
    refetchInterval: poll(opts.follow),
    placeholderData: keepPreviousData,
  });
}

export function useFleet(runId: string, win: Win | null, xBuckets: number, opts: { enabled: boolean; follow: boolean }) {
  return useQuery({
    queryKey: telemetryKeys.fleet(runId, win, xBuckets),
    queryFn: () => apiJson<FleetResponse>(telemetryUrl(runId, "timeline/fleet", { t0: win?.t0, t1: win?.t1, x_buckets: xBuckets })),
    enabled: opts.enabled,
    refetchInterval: poll(opts.follow),
    placeholderData: keepPreviousData,
  });
}

export interface ResolvedLane {
  node: string;
  gpu: number;
  index: number;
  roles: readonly string[];
}

/**
 * Resolve a lane selection on the server (the grammar's judge, lib/contracts/lanes.ts):
 * `GET /api/timeline/lanes` lists exactly the run's selected lanes, and a bad selector is a
 * 400 with the server's message. `t1` (the newest data) keys the answer so it follows new
 * lanes; null disables the query (the selection was resolved locally).
 */
export function useResolvedLanes(runId: string, lanes: string, t1: number | null) {
  return useQuery({
    queryKey: telemetryKeys.resolve(runId, lanes, t1 === null ? null : Math.floor(t1)),
    queryFn: async (): Promise<ResolvedLane[]> => {
      const r = await apiJson<GetTimelineLanesResponse>(telemetryUrl(runId, "timeline/lanes", { lanes }));
      return r.selected.map((l) => ({ node: l.node, gpu: l.gpu, index: l.index, roles: l.roles }));
    },
    enabled: t1 !== null,
    placeholderData: keepPreviousData,
  });
}

export async function fetchOutliers(runId: string, criterion: string, topK = 8): Promise<OutliersResponse> {
  return apiJson<OutliersResponse>(telemetryUrl(runId, "timeline/outliers", { criterion, top_k: topK }));
}
