/**
 * The server's view of run health: `getRunStatus` with the operator's settings
 * (`serve --run-logs RUN_ID=GLOB`, docs/api.md 9.5.1) for one RunContext.
 */
import type { GetRunStatusResponse } from "@/lib/contracts/health";
import { serverEnv } from "@/lib/env";
import { getRunStatus } from "@/lib/health";
import type { MetricStore } from "@/lib/store/telemetry";

export function runStatusOf(run: { id: string; store: MetricStore }, now?: number): Promise<GetRunStatusResponse> {
  return getRunStatus(run, { logGlobs: serverEnv().runLogs[run.id] ?? [], now });
}
