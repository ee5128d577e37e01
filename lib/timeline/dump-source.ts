/**
 * What the telemetry side needs from the dump reader (lib/store/dumps): visible rollout
 * ids, the tokenizer flag, per-step aggregates (`dump/*` metrics, docs/api.md 4.2) and the
 * newest step's summary/groups for the rollout advisories (10.3). `DumpReader` satisfies
 * this structurally (checked in golden.test.ts); tests use small fakes.
 */
import type { StepAggregateRow } from "@/lib/store/dumps/groups";
import type { StepTraces } from "@/lib/store/dumps/traces";
import type { PerTokenField, SampleRecord, TokenTextDecoder, TrainRow } from "@/lib/store/dumps";

export { DUMP_METRIC_PREFIX, STEP_AGGREGATE_METRICS } from "@/lib/store/dumps/groups";
export type { StepAggregateRow, StepTraces };

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
  /** One row per visible train rolloutId (may throw ApiError still_writing). */
  stepAggregates(): Promise<readonly StepAggregateRow[]>;
  summary(rolloutId: number, evaluation: boolean): Promise<DumpTable>;
  groups(rolloutId: number, evaluation: boolean): Promise<DumpTable>;
  /** Dump files found unreadable so far (left out of `stepAggregates`), by file. */
  skippedDumps?(): readonly { file: string; reason: string }[];
  /** A step's per-sample request traces (slime; lib/store/dumps/traces.ts). */
  sampleTraces?(rolloutId: number, evaluation: boolean): Promise<StepTraces>;
  /** A small value derived from a train step's traces, cached while its dump is unchanged. */
  traceDigest?<T>(rolloutId: number, name: string, derive: (t: StepTraces) => T): Promise<T>;
  /**
   * Per-step derived data for the `drift/*` and `staleness/*` families (lib/rollout/drift.ts):
   * a cached per-step result under the step's source key, and the two-field token join.
   * Optional: a source without them lists no drift keys.
   */
  stepKey?(rolloutId: number, evaluation?: boolean): Promise<string>;
  hasTrainShards?(rolloutId: number): Promise<boolean>;
  derived?<T>(rolloutId: number, evaluation: boolean, name: string, compute: () => Promise<T>): Promise<T>;
  reduceTrainRows?<T>(
    rolloutId: number,
    fields: readonly PerTokenField[],
    reduce: (row: TrainRow, sample: SampleRecord | undefined) => T,
    opts?: { withTokens?: boolean },
  ): Promise<{ samples: SampleRecord[]; rows: Map<number, T> }>;
  tokenDecoder?(): Promise<TokenTextDecoder | null>;
}
