/**
 * What the telemetry side needs from the dump reader (lib/store/dumps): visible rollout
 * ids, the tokenizer flag, per-step aggregates (`dump/*` metrics, docs/api.md 4.2) and the
 * newest step's summary/groups for the rollout advisories (10.3). `DumpReader` satisfies
 * this structurally (checked in golden.test.ts); tests use small fakes.
 */
import type { StepAggregateRow } from "@/lib/store/dumps/groups";

export { DUMP_METRIC_PREFIX, STEP_AGGREGATE_METRICS } from "@/lib/store/dumps/groups";
export type { StepAggregateRow };

export interface DumpTable {
  rollout_id: number;
  evaluation: boolean;
  columns: readonly string[];
  /** One object per row, keyed by column. */
  rows: readonly object[];
}

export interface DumpSource {
  /** Visible rollout ids (docs/api.md 1.9), each list ascending. */
  listRolloutIds(): Promise<{ train: number[]; eval: number[] }>;
  hasTokenizer(): Promise<boolean>;
  /** One row per visible train rid (may throw ApiError still_writing). */
  stepAggregates(): Promise<readonly StepAggregateRow[]>;
  summary(rid: number, evaluation: boolean): Promise<DumpTable>;
  groups(rid: number, evaluation: boolean): Promise<DumpTable>;
  /** Dump files found unreadable so far (left out of `stepAggregates`), by file. */
  skippedDumps?(): readonly { file: string; reason: string }[];
}
