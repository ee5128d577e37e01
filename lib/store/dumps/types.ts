/**
 * Plain record types shared by the dump reader's modules (docs/api.md 1.3, 1.4, 2).
 * Numeric per-token data stays in typed arrays; `NumArray` is whatever a tensor row
 * materialised to (Float32Array for f32/bf16/f16 storages, Float64Array, Int32Array, …)
 * or a plain number[] for pickled lists.
 */
export type NumArray = ArrayLike<number>;

/** The seven per-token train fields, in the order the join resolves them (2.4). */
export const PER_TOKEN_FIELDS = [
  "log_probs",
  "rollout_log_probs",
  "ref_log_probs",
  "entropy",
  "ref_entropy",
  "advantages",
  "returns",
] as const;
export type PerTokenField = (typeof PER_TOKEN_FIELDS)[number];

/** One `Sample` of a rollout dump, reduced to what the read side uses (1.3). */
export interface SampleRecord {
  index: number | null;
  groupIndex: number | null;
  prompt: unknown;
  tokens: NumArray;
  /** `len(tokens)` when `tokens` was not materialised (summary loads); else undefined. */
  totalLength?: number;
  responseLength: number;
  reward: unknown;
  lossMask: NumArray | null;
  weightVersions: string[];
  rolloutLogProbs: NumArray | null;
  removeSample: boolean;
  status: string;
  nonGenerationTime: number;
  specAcceptTokenNum: number;
  specDraftTokenNum: number;
  cachedTokens: number;
  totalPromptTokens: number;
  /** The engine that served the sample, when its `metadata` records one (drift by engine). */
  engine?: string | null;
  /** The decoded response text (`Sample.response`), when a string (search). */
  response?: string | null;
}

/** The deduplicated, CP-reassembled train view of one sample (2.2–2.4). */
export interface TrainRow {
  sampleIndex: number;
  /** Top-level `rank` of the primary file (shard number when absent): `dumped_rank`. */
  rank: number;
  responseLength: number;
  totalLength: number;
  /** Normalized reward (`rewards` column). */
  reward: number;
  lossMask: NumArray;
  /** `truncated[r]` when the column was dumped, else undefined. */
  truncated: boolean | undefined;
  /** Batch-global raw reward (2.3); null when not dumped or on the point-read path. */
  rawReward: number | null;
  fields: Record<PerTokenField, NumArray | null>;
  alignmentFailed: boolean;
}
