/**
 * react-query hooks of the Rollouts and Sample views. Every key starts with the run id,
 * so two runs never share a cached answer; the key factory is the one place that names
 * them (used for prefetching neighbours too). Dumps of a finished step never change, so
 * those answers stay fresh for a long time; 503 ("still being written") is retried by the
 * query client's policy.
 */
import { keepPreviousData, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import type {
  GetRolloutGroupsResponse,
  GetRolloutSummaryResponse,
  GetRolloutTrajectoriesResponse,
  GetSampleMessagesResponse,
  GetSampleTokensResponse,
} from "@/lib/contracts/rollout";
import { apiJson } from "@/lib/client/fetcher";
import { toGroupsView, toSummaryView, type MetaRolloutIds } from "@/lib/rollout-view/types";

const DUMP_STALE_MS = 5 * 60_000;

export const rolloutKeys = {
  all: (runId: string) => ["rollout", runId] as const,
  ids: (runId: string) => ["rollout", runId, "ids"] as const,
  summary: (runId: string, step: number, evaluation: boolean) => ["rollout", runId, step, evaluation, "summary"] as const,
  groups: (runId: string, step: number, evaluation: boolean) => ["rollout", runId, step, evaluation, "groups"] as const,
  trajectories: (runId: string, step: number, sampleIndex: number | null) => ["rollout", runId, step, false, "trajectories", sampleIndex] as const,
  messages: (runId: string, step: number, evaluation: boolean, sampleIndex: number) => ["rollout", runId, step, evaluation, "messages", sampleIndex] as const,
  tokens: (runId: string, step: number, evaluation: boolean, sampleIndex: number, start: number, end: number | null) =>
    ["rollout", runId, step, evaluation, "tokens", sampleIndex, start, end] as const,
};

function url(path: string, params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== false) q.set(k, String(v));
  return `${path}?${q.toString()}`;
}

const base = (step: number) => `/api/rollout/${step}`;

/** The URLs the hooks below fetch (also preloaded by the views' server render). */
export const rolloutUrls = {
  summary: (runId: string, step: number, evaluation: boolean) => url(`${base(step)}/summary`, { run: runId, eval: evaluation }),
  groups: (runId: string, step: number, evaluation: boolean) => url(`${base(step)}/groups`, { run: runId, eval: evaluation }),
  trajectories: (runId: string, step: number, sampleIndex: number | null) => url(`${base(step)}/trajectories`, { run: runId, sample_index: sampleIndex }),
  messages: (runId: string, step: number, evaluation: boolean, sampleIndex: number) =>
    url(`${base(step)}/sample/${sampleIndex}/messages`, { run: runId, eval: evaluation }),
  tokens: (runId: string, step: number, evaluation: boolean, sampleIndex: number, start: number, end: number | null) =>
    url(`${base(step)}/sample/${sampleIndex}/tokens`, { run: runId, start, end, eval: evaluation }),
};

function summaryQuery(runId: string, step: number, evaluation: boolean) {
  return {
    queryKey: rolloutKeys.summary(runId, step, evaluation),
    queryFn: async () => toSummaryView(await apiJson<GetRolloutSummaryResponse>(rolloutUrls.summary(runId, step, evaluation))),
    staleTime: DUMP_STALE_MS,
  };
}

export function useRolloutIds(runId: string, initial: MetaRolloutIds["rollout_ids"], live: boolean) {
  return useQuery({
    queryKey: rolloutKeys.ids(runId),
    queryFn: async () => (await apiJson<MetaRolloutIds>(url("/api/meta", { run: runId }))).rollout_ids,
    initialData: initial,
    staleTime: live ? 10_000 : Infinity,
    // A live run grows new steps: poll so prev/next and "newest" stay current.
    refetchInterval: live ? 15_000 : false,
  });
}

export function useRolloutSummary(runId: string, step: number, evaluation: boolean) {
  return useQuery({ ...summaryQuery(runId, step, evaluation), placeholderData: keepPreviousData });
}

export function useRolloutGroups(runId: string, step: number, evaluation: boolean) {
  return useQuery({
    queryKey: rolloutKeys.groups(runId, step, evaluation),
    queryFn: async () => toGroupsView(await apiJson<GetRolloutGroupsResponse>(rolloutUrls.groups(runId, step, evaluation))),
    staleTime: DUMP_STALE_MS,
    placeholderData: keepPreviousData,
  });
}

/** Batch anatomy (train steps only); `sampleIndex` restricts it to one lane. */
export function useTrajectories(runId: string, step: number, sampleIndex: number | null, enabled: boolean) {
  return useQuery({
    queryKey: rolloutKeys.trajectories(runId, step, sampleIndex),
    queryFn: () => apiJson<GetRolloutTrajectoriesResponse>(rolloutUrls.trajectories(runId, step, sampleIndex)),
    staleTime: DUMP_STALE_MS,
    enabled,
  });
}

export function useSampleMessages(runId: string, step: number, evaluation: boolean, sampleIndex: number) {
  return useQuery({
    queryKey: rolloutKeys.messages(runId, step, evaluation, sampleIndex),
    queryFn: () => apiJson<GetSampleMessagesResponse>(rolloutUrls.messages(runId, step, evaluation, sampleIndex)),
    staleTime: DUMP_STALE_MS,
  });
}

/** One token window [start, end) (end null = to the end of the sample). */
export function useSampleTokens(runId: string, step: number, evaluation: boolean, sampleIndex: number, start: number, end: number | null, enabled: boolean) {
  return useQuery({
    queryKey: rolloutKeys.tokens(runId, step, evaluation, sampleIndex, start, end),
    queryFn: () => apiJson<GetSampleTokensResponse>(rolloutUrls.tokens(runId, step, evaluation, sampleIndex, start, end)),
    staleTime: DUMP_STALE_MS,
    enabled,
    placeholderData: keepPreviousData,
  });
}

export function prefetchSummary(client: QueryClient, runId: string, step: number, evaluation: boolean): void {
  void client.prefetchQuery(summaryQuery(runId, step, evaluation));
}

/** A stable callback that warms a step's summary (e.g. on hover of a Next button). */
export function usePrefetchStep(runId: string, evaluation: boolean): (step: number | null) => void {
  const client = useQueryClient();
  return useCallback((step: number | null) => (step === null ? undefined : prefetchSummary(client, runId, step, evaluation)), [client, runId, evaluation]);
}
