import { useQuery } from "@tanstack/react-query";
import type { GetRunStatusResponse, RunInputKey } from "@/lib/contracts/health";
import { RUN_INPUTS } from "@/lib/contracts/run-inputs";
import { apiJson } from "@/lib/client/fetcher";
import { useAfterFirstIdle } from "@/lib/client/idle";
import { timelineHref as windowHref } from "@/lib/rollout-view/links";

/**
 * `GET /api/run_status` for one run (docs/api.md 9.5), re-asked every 30 s. Asked once the
 * browser is first idle: the header's state waits for the view's own requests.
 */
export function useRunStatus(runId: string, enabled = true) {
  const idle = useAfterFirstIdle();
  return useQuery({
    enabled: enabled && idle,
    queryKey: ["run_status", runId],
    queryFn: () => apiJson<GetRunStatusResponse>(`/api/run_status?${new URLSearchParams({ run: runId }).toString()}`),
    refetchInterval: 30_000,
    staleTime: 10_000,
  });
}

/** The first missing input among `wanted` (in order), with what writes it; null when all are present or unknown. */
export function firstMissing(status: GetRunStatusResponse | undefined, wanted: readonly RunInputKey[]): { key: RunInputKey; text: string } | null {
  if (!status) return null;
  for (const key of wanted) if (status.inputs[key] && !status.inputs[key].present) return { key, text: RUN_INPUTS[key].written_by };
  return null;
}

/** Compute Utilization at `ts` ± `pad` seconds (the window link of lib/rollout-view/links.ts, unpadded). */
export function timelineHref(runId: string, ts: number, pad = 300): string {
  return windowHref(runId, { t0: ts - pad, t1: ts + pad }, { pad: false });
}
