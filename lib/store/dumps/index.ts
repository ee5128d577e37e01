/**
 * Public surface of the dump reader (rollout/train `.pt` dumps, parquet mirrors,
 * trajectory sidecars, tokenizer). See reader.ts for the policy.
 */
export { DumpReader, openDumpReader } from "./reader";
export type { DumpReaderOptions, GroupsTable, SummaryTable, TokensOptions } from "./reader";
export { DUMP_METRIC_PREFIX, STEP_AGGREGATE_METRICS, GROUP_COLUMNS } from "./groups";
export type { GroupRow, StepAggregateMetric, StepAggregateRow } from "./groups";
export { SUMMARY_VERSION, TRAIN_COLUMNS, NO_TRAIN_COLUMNS } from "./summary";
export type { SummaryColumn, SummaryRow } from "./summary";
export type { TokenPayload } from "./tokens";
export { MIN_AGE_SECONDS, FRESH_SECONDS } from "./files";
export type { NumArray, PerTokenField, SampleRecord, TrainRow } from "./types";
export type { TokenTextDecoder } from "./tokenizer";
