import { useQuery } from "@tanstack/react-query";
import type { GetRunStatusResponse, RunInputKey } from "@/lib/contracts/health";
import { RUN_INPUTS } from "@/lib/contracts/health";
import { apiJson } from "@/lib/client/fetcher";

/** `GET /api/run_status` for one run (docs/api.md 9.5), re-asked every 30 s. */
export function useRunStatus(runId: string) {
  return useQuery({
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

/** Compute Utilization at `ts` ± `pad` seconds (lib/charts/timeline-url.ts: `v=<t0>~<t1>`). */
export function timelineHref(runId: string, ts: number, pad = 300): string {
  const r = (x: number) => String(Math.round(x * 1000) / 1000);
  return `/runs/${encodeURIComponent(runId)}/timeline?v=${r(ts - pad)}~${r(ts + pad)}`;
}
