/**
 * The telemetry API's response types as the chart preparers name them. All come from the
 * route contracts (lib/contracts/telemetry.ts, z.infer) — no hand-written twins.
 */
import type {
  Advisory as AdvisoryT,
  GetAdvisoryResponse,
  GetBubblesResponse,
  GetEngineSeriesResponse,
  GetFleetResponse,
  GetGpuProcessesResponse,
  GetGpuResponse,
  GetMetaResponse,
  GetMetricsResponse,
  GetOutliersResponse,
  GetPhasesResponse,
  GetTopologyResponse,
  HeatmapHeader as HeatmapHeaderT,
  MfuSummary,
} from "@/lib/contracts/telemetry";

export type Meta = GetMetaResponse;
export type MetricsResponse = GetMetricsResponse;
export type MetricPoints = GetMetricsResponse[string];
export type EngineSeriesResponse = GetEngineSeriesResponse;
export type EngineSeriesItem = GetEngineSeriesResponse["series"][number];
export type TopologyResponse = GetTopologyResponse;
export type TopologyLane = GetTopologyResponse["lanes"][number];
export type TopologyWindow = GetTopologyResponse["windows"][number];
export type PhasesResponse = GetPhasesResponse;
export type GpuResponse = GetGpuResponse;
export type ProcessesResponse = GetGpuProcessesResponse;
export type ProcessRow = GetGpuProcessesResponse["processes"][number];
export type BubblesResponse = GetBubblesResponse;
export type Bubble = GetBubblesResponse["bubbles"][number];
export type AdvisoryResponse = GetAdvisoryResponse;
export type Advisory = AdvisoryT;
export type Mfu = MfuSummary;
export type OutliersResponse = GetOutliersResponse;
export type FleetResponse = GetFleetResponse;
export type HeatmapHeader = HeatmapHeaderT;
export type HeatmapRowHeader = HeatmapHeaderT["rows"][number];
