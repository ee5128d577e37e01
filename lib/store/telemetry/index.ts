export { MetricStore, openMetricStore, type MetricStoreOptions } from "@/lib/store/telemetry/store";
export * from "@/lib/store/telemetry/types";
// The surface the endpoint layers (lib/timeline, lib/advisory) read blocks through.
export { cmpStr, laneCountBound, type EngineMetricColumns, type GpuBlock, type LaneCounts, type LaneRows, type PhaseBlock, type TickColumns, type UtilPeaks, type UtilTotals } from "@/lib/store/telemetry/blocks";
export { blockParts, ENGINE_MEAN_AGGREGATED_METRICS, partsOf, type Part } from "@/lib/store/telemetry/engine-parts";
export { forEachRowRun, forEachRowRunOutside, forEachTickRun, maxUtilByBucket } from "@/lib/store/telemetry/scan";
export { filesStamp } from "@/lib/store/telemetry/stream";
export { factsBounds, unmatchedAcrossHours } from "@/lib/store/telemetry/phase-index";
export { whileAnswering } from "@/lib/store/telemetry/binary-cache";
export { setParseWorkers } from "@/lib/store/telemetry/parse-pool";
export { Col, CHUNK, MASK, SHIFT } from "@/lib/store/telemetry/columns";
// Per-request SGLang timing (docs/formats.md §4.14).
export { listRequestSteps, readStepRequests } from "@/lib/store/telemetry/requests";
