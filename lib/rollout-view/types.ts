/**
 * Shapes of the `/api/rollout/*` answers as the views consume them. The API's zod
 * contracts (lib/contracts/rollout.ts) are the source of truth; the summary and groups
 * tables are re-typed here as column-keyed records because the views address columns
 * by name (the column list comes from the server), see `toSummaryView`.
 */
import type {
  GetRolloutGroupsResponse,
  GetRolloutSummaryResponse,
  GetRolloutTrajectoriesResponse,
  GetSampleMessagesResponse,
  GetSampleTokensResponse,
  TrajectoryLaneDto,
} from "@/lib/contracts/rollout";
import type { GetMetaResponse } from "@/lib/contracts/telemetry";

/** One table cell as JSON can carry it (NaN/Inf arrive as null). */
export type Cell = number | string | boolean | null;

/** `GET /api/rollout/<id>/summary` and `/groups`: a column list and rows keyed by it. */
export interface RolloutTable<R> {
  rollout_id: number;
  evaluation: boolean;
  columns: string[];
  rows: R[];
}

export type SummaryRow = Record<string, Cell> & {
  sample_index: number;
  group_index: number | null;
};
export type GroupRow = Record<string, Cell> & { group_index: number | null };

export type SummaryResponse = RolloutTable<SummaryRow>;
export type GroupsResponse = RolloutTable<GroupRow>;

/** Column-keyed view of a summary answer (a row without a sample index cannot be opened, so it is dropped). */
export function toSummaryView(r: GetRolloutSummaryResponse): SummaryResponse {
  return { ...r, rows: r.rows.filter((x): x is typeof x & { sample_index: number } => x.sample_index !== null) };
}

export function toGroupsView(r: GetRolloutGroupsResponse): GroupsResponse {
  return r;
}

export type TrajectoriesResponse = GetRolloutTrajectoriesResponse;
export type TrajectoryLane = TrajectoryLaneDto;
export type TrajectorySegment = TrajectoryLane["segments"][number];

/** `GET /api/rollout/<id>/sample/<idx>/messages`: the sidecar row, passed through. */
export type SampleMessagesResponse = GetSampleMessagesResponse;

export const TOKEN_STATS = [
  "imp_ratio",
  "lp_diff",
  "advantages",
  "returns",
  "entropy",
  "ref_entropy",
  "train_log_probs",
  "rollout_log_probs",
  "ref_log_probs",
] as const;
export type TokenStat = (typeof TOKEN_STATS)[number];

/** `GET /api/rollout/<id>/sample/<idx>/tokens?start=&end=` (docs/api.md 5). */
export type TokensResponse = GetSampleTokensResponse;

/** `GET /api/meta?run=` — the rollout views read only `rollout_ids`. */
export type MetaRolloutIds = Pick<GetMetaResponse, "rollout_ids">;
