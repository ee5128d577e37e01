export { MetricStore, openMetricStore, type MetricStoreOptions } from "@/lib/store/telemetry/store";
export * from "@/lib/store/telemetry/types";
