/**
 * The server's view of run health: `getRunStatus` with the operator's settings
 * (`serve --run-logs RUN_ID=GLOB`, docs/api.md 9.5.1) for one RunContext.
 */
import type { GetRunStatusResponse, RunState } from "@/lib/contracts/health";
import { serverEnv } from "@/lib/env";
import { getRunStatus } from "@/lib/health";
import { getAdvisory, type Advisory } from "@/lib/advisory";
import { lastLoggedStep } from "@/lib/health/lifecycle";
import { isMuted } from "@/lib/server/alerts/mutes";
import { getDb } from "@/lib/server/db";
import { getRunOrThrow } from "@/lib/server/runs/context";
import type { MetricStore } from "@/lib/store/telemetry";
import type { DumpSource } from "@/lib/timeline/dump-source";

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
  /** Critical + warning alarms: the lifecycle cause, advisories (docs/api.md 10), fired signals. */
  alarms: number;
  /** The newest logged training step (metrics; a dump-only run: its newest dump), null without any. */
  last_step: number | null;
}

/** A cached judgement is reused while the run's newest mtime is unchanged and it is this young. */
export const RUN_STATE_TTL_S = 30;
const REFRESH_BUDGET_MS = 1500;
const REFRESH_CONCURRENCY = 2;

type CacheEntry = { key: string; at: number; value: RunHealthSummary };
const g = globalThis as unknown as { __rlboardRunHealth?: Map<string, CacheEntry> };
const cache: Map<string, CacheEntry> = (g.__rlboardRunHealth ??= new Map<string, CacheEntry>());
const inflight = new Map<string, Promise<void>>();

const LEVEL = { critical: 0, warning: 1, info: 2 } as const;

/**
 * The run's health summary (docs/api.md 9.5.4): the worst alarm is a crashed/stalled
 * state's cause, else the worst advisory alarm (critical before warning; the advisory
 * tiering puts alarms before tuning hints), else the worst fired log signal. Tuning
 * hints (info) never count as alarms.
 */
export function summarize(s: GetRunStatusResponse, advisories: readonly Advisory[] = [], lastStep: number | null = null): RunHealthSummary {
  const { state, cause } = s.lifecycle;
  const fired = s.log_signals.filter((x) => x.count > 0);
  const ranked = advisories.filter((a) => a.level !== "info").sort((a, b) => LEVEL[a.level] - LEVEL[b.level]);
  // the stall watchdog's advisories are the stalled state's cause: not counted twice
  const extra = ranked.filter((a) => !(state === "stalled" && a.level === "critical" && a.message.startsWith("Phase '")));
  const alarms = (state === "crashed" || state === "stalled" ? 1 : 0) + extra.length + fired.length;
  const base = { state, alarms, last_step: lastStep };
  if (state === "crashed" || state === "stalled") return { ...base, alarm: { level: "critical", text: cause } };
  const worstSignal = fired.find((x) => x.severity === "critical") ?? fired[0];
  const top = ranked[0];
  if (top && (top.level === "critical" || worstSignal?.severity !== "critical")) {
    return { ...base, alarm: { level: top.level as "critical" | "warning", text: top.message } };
  }
  return { ...base, alarm: worstSignal ? { level: worstSignal.severity, text: `${worstSignal.signal} ×${worstSignal.count}` } : null };
}

/** Everything the run list's state cell shows, judged from whatever inputs the run has. */
export async function judgeRunHealth(run: { id: string; store: MetricStore; dumps: DumpSource; settings: { lowMfuThreshold: number } }): Promise<RunHealthSummary> {
  const status = await runStatusOf(run);
  let advisories: Advisory[] = [];
  try {
    advisories = (await getAdvisory(run, {})).advisories;
  } catch {
    // an advisory that cannot be computed leaves the state and signals standing
  }
  return summarize(status, advisories, await lastLoggedStep(run.store, run.dumps));
}

export function cachedRunHealth(id: string): RunHealthSummary | null {
  return cache.get(id)?.value ?? null;
}

/** Judge the runs whose cache is stale (`key`: e.g. their newest mtime), within the budget. */
export async function refreshRunHealth(
  runs: readonly { id: string; key: string }[],
  budgetMs = REFRESH_BUDGET_MS,
  judge: (id: string) => Promise<RunHealthSummary> = async (id) => judgeRunHealth(await getRunOrThrow(id)),
): Promise<void> {
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
            cache.set(r.id, { key: r.key, at: Date.now() / 1000, value: await judge(r.id) });
          } catch {
            // a run that cannot be judged keeps no state (the column shows nothing)
          } finally {
            inflight.delete(r.id);
          }
        })();
        inflight.set(r.id, p);
      }
      // The budget bounds the wait too: a judgment still running (the first one of a
      // 1024-GPU day reads every engine partition) finishes in the background and the
      // list shows that run's state on a later request.
      const left = deadline - performance.now();
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  };
  await Promise.all(Array.from({ length: REFRESH_CONCURRENCY }, worker));
}
