/**
 * Endpoint-level functions of the telemetry API (docs/api.md 9.2): each takes the parsed query
 * of its contract (lib/contracts/telemetry.ts), applies the reference's checks in the
 * reference's order (window, bounds, lane grammar) and returns the response body.
 * Route files call exactly one of these.
 */
import { encodeFrame, encodeGpuFrame, encodePhaseFrame } from "@/lib/contracts/binary";
import type {
  GetEngineSeriesQuery,
  GetFleetQuery,
  GetGpuProcessesQuery,
  GetGpuQuery,
  GetHeatmapQuery,
  GetMetricsQuery,
  GetOutliersQuery,
  GetPhasesQuery,
} from "@/lib/contracts/telemetry";
import type { MetricStore } from "@/lib/store/telemetry";
import type { DumpSource } from "@/lib/timeline/dump-source";
import { engineSeries } from "@/lib/timeline/engine";
import { gpuProcesses, gpuSeries } from "@/lib/timeline/gpu";
import { fleet, heatmap, heatmapHeader } from "@/lib/timeline/heatmap";
import { resolveLanes } from "@/lib/timeline/lanes";
import { bubbles, getMetrics as metricsBody } from "@/lib/timeline/metrics";
import { outliers } from "@/lib/timeline/outliers";
import { laneIntervals, phasesByLane } from "@/lib/timeline/phases";
import { checkMaxPoints, checkTopK, checkWindow, checkXBuckets } from "@/lib/timeline/window";

export { getMeta, type TelemetryRun } from "@/lib/timeline/meta";
export { getTopology } from "@/lib/timeline/topology";
export { engineNamesAtHand } from "@/lib/timeline/engine";

const n = (v: number | null | undefined): number | null => (v === undefined ? null : v);

async function selection(store: MetricStore, lanes: string | undefined) {
  if (lanes === undefined) return null;
  return resolveLanes(lanes, await store.laneIndex());
}

export async function getPhases(store: MetricStore, q: Omit<GetPhasesQuery, "format">) {
  checkWindow(q.t0, q.t1);
  const sel = await selection(store, q.lanes);
  return { phases: await phasesByLane(store, n(q.t0), n(q.t1), sel) };
}

/** The phase lanes as a binary column frame (lib/contracts/binary.ts): the same intervals, no objects. */
export async function getPhasesFrame(store: MetricStore, q: Omit<GetPhasesQuery, "format">): Promise<Uint8Array<ArrayBuffer>> {
  checkWindow(q.t0, q.t1);
  const sel = await selection(store, q.lanes);
  return encodePhaseFrame(await laneIntervals(store, n(q.t0), n(q.t1), sel), store.dicts.phaseStrings.values);
}

export async function getGpu(store: MetricStore, q: Omit<GetGpuQuery, "format">) {
  checkWindow(q.t0, q.t1);
  checkMaxPoints(q.max_points);
  const sel = await selection(store, q.lanes);
  return { lanes: await gpuSeries(store, n(q.t0), n(q.t1), q.max_points, sel) };
}

/** The GPU series as a binary column frame (lib/contracts/binary.ts). */
export async function getGpuFrame(store: MetricStore, q: Omit<GetGpuQuery, "format">): Promise<Uint8Array<ArrayBuffer>> {
  return encodeGpuFrame((await getGpu(store, q)).lanes);
}

export async function getGpuProcesses(store: MetricStore, q: GetGpuProcessesQuery) {
  checkWindow(q.t0, q.t1);
  const sel = await selection(store, q.lanes);
  return { processes: await gpuProcesses(store, n(q.t0), n(q.t1), sel) };
}

export async function getEngineSeries(store: MetricStore, q: GetEngineSeriesQuery) {
  checkWindow(q.t0, q.t1);
  checkMaxPoints(q.max_points);
  return { series: await engineSeries(store, q.metric, n(q.t0), n(q.t1), q.max_points, q.per_dp_rank) };
}

/** The heatmap as its binary frame (lib/contracts/binary.ts). */
export async function getHeatmapFrame(store: MetricStore, q: GetHeatmapQuery): Promise<Uint8Array<ArrayBuffer>> {
  checkWindow(q.t0, q.t1);
  checkXBuckets(q.x_buckets);
  const sel = await selection(store, q.lanes);
  const h = await heatmap(store, q.metric, n(q.t0), n(q.t1), q.x_buckets, sel);
  return encodeFrame(heatmapHeader(h), h.values);
}

export async function getFleet(store: MetricStore, q: GetFleetQuery) {
  checkWindow(q.t0, q.t1);
  checkXBuckets(q.x_buckets);
  return fleet(store, n(q.t0), n(q.t1), q.x_buckets);
}

export async function getOutliers(store: MetricStore, q: GetOutliersQuery) {
  checkTopK(q.top_k);
  return { outliers: await outliers(store, q.criterion, n(q.t0), n(q.t1), q.top_k) };
}

export async function getBubbles(store: MetricStore) {
  return { bubbles: await bubbles(store) };
}

export async function getMetrics(store: MetricStore, dumps: DumpSource, q: GetMetricsQuery) {
  return metricsBody(store, dumps, { keys: q.keys, x: q.x, t0: n(q.t0), t1: n(q.t1) });
}

export { getAdvisory } from "@/lib/advisory";
