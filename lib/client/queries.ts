import { useQuery } from "@tanstack/react-query";
import type { GetRunsResponse } from "@/lib/contracts/runs";
import { apiJson } from "@/lib/client/fetcher";

/** Query-key factory: every cached answer is keyed by run first, so runs never mix. */
export const queryKeys = {
  runs: (q: string) => ["runs", q] as const,
  run: (runId: string) => ["run", runId] as const,
};

/** Some run not judged yet (state null): the server is judging it now, ask again soon. */
const unjudged = (d: GetRunsResponse | undefined) => d?.runs.some((r) => r.state == null) ?? false;

export function useRuns(initial: GetRunsResponse) {
  return useQuery({
    queryKey: queryKeys.runs(""),
    queryFn: () => apiJson<GetRunsResponse>("/api/runs"),
    initialData: initial,
    // A server render without every state is refreshed at once, then every 2 s until all are in.
    initialDataUpdatedAt: unjudged(initial) ? 0 : undefined,
    refetchInterval: (q) => (unjudged(q.state.data) ? 2_000 : 10_000),
  });
}
