/**
 * The server's view of run health: `getRunStatus` with the operator's settings
 * (`serve --run-logs RUN_ID=GLOB`, docs/api.md 9.5.1) for one RunContext.
 */
import type { GetRunStatusResponse, RunState } from "@/lib/contracts/health";
import { serverEnv } from "@/lib/env";
import { getRunStatus } from "@/lib/health";
import { isMuted } from "@/lib/server/alerts/mutes";
import { getDb } from "@/lib/server/db";
import { getRunOrThrow } from "@/lib/server/runs/context";
import type { MetricStore } from "@/lib/store/telemetry";

export async function runStatusOf(run: { id: string; store: MetricStore }, now?: number): Promise<GetRunStatusResponse> {
  const env = serverEnv();
  const status = await getRunStatus(run, { logGlobs: env.runLogs[run.id] ?? [], now });
  return { ...status, alerts: { configured: env.alertWebhooks.length > 0, muted: isMuted(getDb(), run.id) } };
}

// ---------------------------------------------------------------------------------------
// The run list's state column (docs/api.md 9.5.4): judged per run, cached, refreshed within
// a time budget per /api/runs request so a lab with hundreds of runs never waits on all.

export interface RunHealthSummary {
  state: RunState;
  alarm: { level: "critical" | "warning"; text: string } | null;
}

/** A cached judgement is reused while the run's newest mtime is unchanged and it is this young. */
export const RUN_STATE_TTL_S = 30;
const REFRESH_BUDGET_MS = 1500;
const REFRESH_CONCURRENCY = 2;

type CacheEntry = { key: string; at: number; value: RunHealthSummary };
const g = globalThis as unknown as { __rlboardRunHealth?: Map<string, CacheEntry> };
const cache: Map<string, CacheEntry> = (g.__rlboardRunHealth ??= new Map<string, CacheEntry>());
const inflight = new Map<string, Promise<void>>();

/** The run's health summary from its status (worst alarm: the state's cause, else the worst signal). */
export function summarize(s: GetRunStatusResponse): RunHealthSummary {
  const { state, cause } = s.lifecycle;
  if (state === "crashed" || state === "stalled") return { state, alarm: { level: "critical", text: cause } };
  const fired = s.log_signals.filter((x) => x.count > 0);
  const worst = fired.find((x) => x.severity === "critical") ?? fired[0];
  return { state, alarm: worst ? { level: worst.severity, text: `${worst.signal} ×${worst.count}` } : null };
}

export function cachedRunHealth(id: string): RunHealthSummary | null {
  return cache.get(id)?.value ?? null;
}

/** Judge the runs whose cache is stale (`key`: e.g. their newest mtime), within the budget. */
export async function refreshRunHealth(runs: readonly { id: string; key: string }[], budgetMs = REFRESH_BUDGET_MS): Promise<void> {
  const deadline = performance.now() + budgetMs;
  const now = Date.now() / 1000;
  const stale = runs.filter((r) => {
    const c = cache.get(r.id);
    return !c || c.key !== r.key || now - c.at > RUN_STATE_TTL_S;
  });
  let next = 0;
  const worker = async () => {
    while (next < stale.length && performance.now() < deadline) {
      const r = stale[next++]!;
      let p = inflight.get(r.id);
      if (!p) {
        p = (async () => {
          try {
            const status = await runStatusOf(await getRunOrThrow(r.id));
            cache.set(r.id, { key: r.key, at: Date.now() / 1000, value: summarize(status) });
          } catch {
            // a run that cannot be judged keeps no state (the column shows nothing)
          } finally {
            inflight.delete(r.id);
          }
        })();
        inflight.set(r.id, p);
      }
      await p;
    }
  };
  await Promise.all(Array.from({ length: REFRESH_CONCURRENCY }, worker));
}
