import { QueryClient } from "@tanstack/react-query";
import { ApiClientError } from "@/lib/client/fetcher";

/**
 * Retry 503s only: "still being written" 3 times, 1.5 s apart, as the original did; a
 * "busy" server (the heavy-query gate, docs/api.md "Limits") up to 6 times, after its
 * `Retry-After` (plus jitter, so a refused burst does not come back as one burst).
 */
export function retryPolicy(failures: number, err: unknown): boolean {
  if (!(err instanceof ApiClientError) || !err.retryable) return false;
  return failures < (err.code === "busy" ? 6 : 3);
}

export function retryDelayMs(_attempt: number, err: unknown): number {
  if (err instanceof ApiClientError && err.code === "busy") {
    return (err.retryAfterS ?? 1) * 1000 + Math.floor(Math.random() * 500);
  }
  return 1_500;
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        refetchOnWindowFocus: false,
        retry: retryPolicy,
        retryDelay: retryDelayMs,
      },
    },
  });
}
