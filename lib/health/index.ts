/**
 * `GET /api/run_status` (docs/api.md 9.5): lifecycle, log signals (every signal, zero
 * counts kept) and inputs of one run. The log scanner of a run lives as long as its
 * telemetry store (one per RunContext), so a request reads only what the logs gained.
 */
import type { GetRunStatusResponse, LogSignal } from "@/lib/contracts/health";
import { inputStatus } from "@/lib/health/inputs";
import { judgeLifecycle, lifecycleFacts } from "@/lib/health/lifecycle";
import { LogScanner, MAX_SAMPLES, type LogSource } from "@/lib/store/logs/scanner";
import { ruleOf } from "@/lib/store/logs/signals";
import { globSources, runLogSources } from "@/lib/health/sources";
import { LOG_SIGNALS_DIR, parseLogSignalText, type LogSignalRecord } from "@/lib/store/format";
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


/**
 * Signal records the collector's `--logs GLOB` tailer appended on the nodes
 * (docs/formats.md §4.13); a torn or corrupt line fails only itself.
 */
export async function forwardedSignals(store: MetricStore): Promise<LogSignalRecord[]> {
  const out: LogSignalRecord[] = [];
  const names = (await store.fs.readdir(LOG_SIGNALS_DIR)).filter((n) => n.endsWith(".jsonl")).sort();
  for (const n of names) {
    let text: string;
    try {
      text = (await store.fs.readFile(`${LOG_SIGNALS_DIR}/${n}`)).toString("utf8");
    } catch {
      continue;
    }
    out.push(...parseLogSignalText(text));
  }
  return out;
}

/** Fold forwarded records into the scanned signals (samples named `node:file`, newest 3 kept). */
export function mergeForwarded(signals: LogSignal[], records: readonly LogSignalRecord[]): LogSignal[] {
  const by = new Map(signals.map((s) => [s.signal as string, { ...s, samples: s.samples.map((x) => ({ ...x, ts: s.last_ts ?? 0 })) }]));
  for (const r of [...records].sort((a, b) => a.ts - b.ts)) {
    const s = by.get(r.signal);
    if (!s || !(r.count > 0)) continue;
    s.count += r.count;
    s.first_ts = s.first_ts === null ? r.first_ts : Math.min(s.first_ts, r.first_ts);
    s.last_ts = s.last_ts === null ? r.last_ts : Math.max(s.last_ts, r.last_ts);
    for (const x of r.samples.slice(-MAX_SAMPLES)) s.samples.push({ file: `${r.node}:${x.file}`, line: x.line, text: x.text, ts: r.last_ts });
  }
  return signals.map((orig) => {
    const s = by.get(orig.signal)!;
    const samples = s.samples
      .map((x, i) => ({ x, i }))
      .sort((a, b) => a.x.ts - b.x.ts || a.i - b.i)
      .slice(-MAX_SAMPLES)
      .map(({ x }) => ({ file: x.file, line: x.line, text: x.text }));
    return { ...s, samples };
  });
}

/** Scan the run's logs (incrementally) and answer every signal. */
export async function logSignals(store: MetricStore, globs: readonly string[] = []): Promise<{ signals: LogSignal[]; files: number; lastModified: number | null }> {
  const sources = await logSources(store, globs);
  const scanner = scannerOf(store);
  await scanner.scan(sources);
  const signals = scanner.result().map((s) => ({ ...s, severity: ruleOf(s.signal).severity }));
  const scanned: LogSignal[] = signals.map(({ signal, severity, count, first_ts, last_ts, samples }) => ({ signal, severity, count, first_ts, last_ts, samples }));
  const forwarded = await forwardedSignals(store);
  const newestForwarded = forwarded.reduce<number | null>((m, r) => (m === null || r.ts > m ? r.ts : m), null);
  const lastModified = scanner.lastModified === null ? newestForwarded : newestForwarded === null ? scanner.lastModified : Math.max(scanner.lastModified, newestForwarded);
  return { signals: forwarded.length ? mergeForwarded(scanned, forwarded) : scanned, files: sources.length + (forwarded.length ? 1 : 0), lastModified };
}

export async function getRunStatus(run: { store: MetricStore }, opts: RunStatusOptions = {}): Promise<GetRunStatusResponse> {
  const { signals, files, lastModified } = await logSignals(run.store, opts.logGlobs);
  const facts = await lifecycleFacts(run.store, lastModified);
  const lifecycle = judgeLifecycle(facts, signals, opts.now ?? Date.now() / 1000);
  return { lifecycle, log_signals: signals, inputs: await inputStatus(run.store, files) };
}
