/**
 * The on-disk format of a run's `dashboard/` directory (docs/formats.md): stream names
 * and partitioning, record schemas with their inferred types, the fast pre-checks that
 * agree with them, the hourly partition key, `meta.json`, `lane_catalog.json`, and
 * Python-compatible JSON (one tolerant reader, one byte-exact writer). The only module
 * that knows the format: the writer, the readers (MetricStore), the collector and the
 * run scan import it. Pure: no file I/O, no Next.
 */
export * from "./streams";
export * from "./python-json";
export * from "./records";
export * from "./partition";
export * from "./meta";
export * from "./lane-catalog";
export { FAST_CHECKS } from "./fast-validate";
export * from "./host";
export * from "./log-signals";
export * from "./requests";
export * from "./sglang-metrics";
export * from "./phase-index";
