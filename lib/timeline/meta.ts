/**
 * `GET /api/meta` (docs/api.md 9.2): run header, time range, catalogs and capabilities.
 */
import type { MetricStore } from "@/lib/store/telemetry";
import { DUMP_METRIC_PREFIX, STEP_AGGREGATE_METRICS, type DumpSource } from "@/lib/timeline/dump-source";
import { engineMetricNames } from "@/lib/timeline/engine";
import { latestDataBufferLength, metricKeys, stepKeys } from "@/lib/timeline/metrics";
import { derivedMetricKeys } from "@/lib/timeline/step-metrics";
import { MAX_WINDOW_S } from "@/lib/timeline/window";

export interface TelemetryRunSettings {
  follow: boolean;
  lowMfuThreshold: number;
  useUtilizationOverview: boolean;
}

/** The parts of a RunContext the telemetry endpoints use. */
export interface TelemetryRun {
  store: MetricStore;
  dumps: DumpSource;
  settings: TelemetryRunSettings;
}

export function wandbUrl(args: Record<string, unknown>): string | null {
  const { wandb_team: team, wandb_project: project, wandb_run_id: runId, wandb_host: host } = args;
  if (!team || !project || !runId) return null;
  const base = (typeof host === "string" && host ? host : "https://wandb.ai").replace(/\/+$/, "");
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  return `${base}/${text(team)}/${text(project)}/runs/${text(runId)}`;
}

/**
 * `/api/meta` is what every open tab polls. Answers are shared for META_TTL_MS per run
 * (concurrent calls share one computation): under load its dozen stat/readdir calls would
 * otherwise queue in libuv's thread pool behind the heavy queries' reads.
 */
export const META_TTL_MS = 500;
const metaMemo = new WeakMap<object, { at: number; answer: Promise<MetaAnswer> }>();
type MetaAnswer = Awaited<ReturnType<typeof computeMeta>>;

export function getMeta(run: TelemetryRun): Promise<MetaAnswer> {
  const now = performance.now();
  const hit = metaMemo.get(run.store);
  if (hit && now - hit.at < META_TTL_MS) return hit.answer;
  const answer = computeMeta(run);
  metaMemo.set(run.store, { at: now, answer });
  answer.catch(() => metaMemo.delete(run.store));
  return answer;
}

async function computeMeta(run: TelemetryRun) {
  const { store, dumps, settings } = run;
  const meta = store.meta();
  const [range, rids, keys, engineKeys, steps, hasTokenizer, dataBuffer, metrics, hasPhases, hasGpu, hasEngine, derived] =
    await Promise.all([
      store.timeRange(),
      dumps.listRolloutIds(),
      metricKeys(store),
      engineMetricNames(store),
      stepKeys(store),
      dumps.hasTokenizer(),
      latestDataBufferLength(store),
      store.metrics(),
      store.phases.hasData(),
      store.gpuUtil.hasData(),
      store.engine.hasData(),
      derivedMetricKeys({ store, dumps }),
    ]);
  const offline = rids.train.length > 0 && metrics.length === 0;
  return {
    mode: settings.follow ? ("follow" as const) : ("static" as const),
    run_name: meta?.run_name ?? null,
    start_ts: meta?.start_ts ?? null,
    wandb_url: meta ? wandbUrl(meta.args) : null,
    data_buffer_length: dataBuffer,
    time_range: range,
    rollout_ids: { train: rids.train, eval: rids.eval },
    metric_keys:
      metrics.length === 0
        ? [...keys, ...(offline ? STEP_AGGREGATE_METRICS.map((c) => DUMP_METRIC_PREFIX + c) : []), ...derived]
        : keys,
    engine_metric_keys: engineKeys,
    step_keys: steps,
    capabilities: {
      has_metrics: metrics.length > 0,
      has_tokenizer: hasTokenizer,
      has_timeline: hasPhases || hasGpu,
      has_engine_series: hasEngine,
      max_window_s: MAX_WINDOW_S,
      use_utilization_overview: settings.useUtilizationOverview,
    },
    corrupt_lines: store.corruptLines(),
    // Additive (rlboard): steps the dump/* aggregates left out, and why (docs/api.md).
    skipped_dumps: dumps.skippedDumps ? [...dumps.skippedDumps()] : [],
    // Additive (rlboard): per-step metrics derived from the run's files (lib/timeline/step-metrics).
    derived_metric_keys: derived,
  };
}
