import { useQuery } from "@tanstack/react-query";
import type { GetRunsResponse } from "@/lib/contracts/runs";
import { apiJson } from "@/lib/client/fetcher";

/** Query-key factory: every cached answer is keyed by run first, so runs never mix. */
export const queryKeys = {
  runs: (q: string) => ["runs", q] as const,
  run: (runId: string) => ["run", runId] as const,
};

export function useRuns(initial: GetRunsResponse) {
  return useQuery({
    queryKey: queryKeys.runs(""),
    queryFn: () => apiJson<GetRunsResponse>("/api/runs"),
    initialData: initial,
    refetchInterval: 10_000,
  });
}
