/**
 * `GET /api/run_status` (docs/api.md 9.5): lifecycle, log signals (every signal, zero
 * counts kept) and inputs of one run. The log scanner of a run lives as long as its
 * telemetry store (one per RunContext), so a request reads only what the logs gained.
 */
import type { GetRunStatusResponse, LogSignal } from "@/lib/contracts/health";
import { inputStatus } from "@/lib/health/inputs";
import { judgeLifecycle, lifecycleFacts } from "@/lib/health/lifecycle";
import { LogScanner, type LogSource } from "@/lib/health/scanner";
import { ruleOf } from "@/lib/health/signals";
import { globSources, runLogSources } from "@/lib/health/sources";
import type { MetricStore } from "@/lib/store/telemetry";

const scanners = new WeakMap<MetricStore, LogScanner>();

function scannerOf(store: MetricStore): LogScanner {
  let s = scanners.get(store);
  if (!s) scanners.set(store, (s = new LogScanner()));
  return s;
}

export interface RunStatusOptions {
  /** Extra log globs for this run (`serve --run-logs RUN_ID=GLOB`). */
  logGlobs?: readonly string[];
  /** Unix seconds (tests pin it). */
  now?: number;
}

/** The run's log files: `{run}/logs/**` plus the operator's globs. */
export async function logSources(store: MetricStore, globs: readonly string[] = []): Promise<LogSource[]> {
  const own = await runLogSources(store.fs);
  const extra = (await Promise.all(globs.map((g) => globSources(g)))).flat();
  return [...own, ...extra];
}

/** Scan the run's logs (incrementally) and answer every signal. */
export async function logSignals(store: MetricStore, globs: readonly string[] = []): Promise<{ signals: LogSignal[]; files: number; lastModified: number | null }> {
  const sources = await logSources(store, globs);
  const scanner = scannerOf(store);
  await scanner.scan(sources);
  const signals = scanner.result().map((s) => ({ ...s, severity: ruleOf(s.signal).severity }));
  return { signals: signals.map(({ signal, severity, count, first_ts, last_ts, samples }) => ({ signal, severity, count, first_ts, last_ts, samples })), files: sources.length, lastModified: scanner.lastModified };
}

export async function getRunStatus(run: { store: MetricStore }, opts: RunStatusOptions = {}): Promise<GetRunStatusResponse> {
  const { signals, files, lastModified } = await logSignals(run.store, opts.logGlobs);
  const facts = await lifecycleFacts(run.store, lastModified);
  const lifecycle = judgeLifecycle(facts, signals, opts.now ?? Date.now() / 1000);
  return { lifecycle, log_signals: signals, inputs: await inputStatus(run.store, files) };
}
