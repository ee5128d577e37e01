import { QueryClient } from "@tanstack/react-query";
import { ApiClientError } from "@/lib/client/fetcher";

/** Retry only "still being written" (503) answers, 3 times, 1.5 s apart, as the original did. */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        refetchOnWindowFocus: false,
        retry: (failures, err) => err instanceof ApiClientError && err.retryable && failures < 3,
        retryDelay: 1_500,
      },
    },
  });
}
