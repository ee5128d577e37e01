/**
 * Endpoint functions of /api/rollout/* (docs/api.md 9.2). Each takes the run's dump
 * reader (and, for trajectories, its timeline) and returns the response body; route
 * files only parse and delegate.
 */
import type { DumpReader, GroupsTable, SummaryTable, TokenPayload } from "@/lib/store/dumps";

export function getRolloutSummary(dumps: DumpReader, rolloutId: number, evaluation: boolean): Promise<SummaryTable> {
  return dumps.summary(rolloutId, evaluation);
}

export function getRolloutGroups(dumps: DumpReader, rolloutId: number, evaluation: boolean): Promise<GroupsTable> {
  return dumps.groups(rolloutId, evaluation);
}

export function getSampleTokens(
  dumps: DumpReader,
  rolloutId: number,
  sampleIndex: number,
  query: { start: number; end?: number | undefined; eval: boolean },
): Promise<TokenPayload> {
  return dumps.tokens(rolloutId, sampleIndex, { start: query.start, end: query.end ?? null, evaluation: query.eval });
}

export function getSampleMessages(
  dumps: DumpReader,
  rolloutId: number,
  sampleIndex: number,
  evaluation: boolean,
): Promise<Record<string, unknown>> {
  return dumps.messages(rolloutId, sampleIndex, evaluation);
}

export {
  getRolloutTrajectories,
  storeTimeline,
  MAX_ANATOMY_WINDOW_S,
  type RolloutTrajectories,
  type TrajectoryTimeline,
} from "./trajectories";
