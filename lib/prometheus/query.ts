/**
 * PromQL for engine series (docs/api.md 8.6 "Source: Prometheus"). The dp-rank fold of
 * 8.6 happens in PromQL, per sample, BEFORE anything is derived: `sum by (…)` (or `avg by`
 * for the intensive gauges) over the series of one engine, grouped like the collector's
 * records — engine = `worker_addr` (router `/engine_metrics`) or the scrape `instance`
 * (direct `/metrics`), labels `engine_type` (+ `dp_rank` per dp rank). A second query,
 * `max by (…) (timestamp(…))`, gives the scrape time of the sample each step point saw, so
 * the reader can keep one point per scrape at its real time (lib/prometheus/fold.ts) and
 * derive rates and interval means exactly as from the collector's files.
 */
import { MAX_RANGE_POINTS } from "@/lib/prometheus/client";

/** Smallest step asked for (s): below any sane scrape interval, so no scrape is skipped. */
export const MIN_STEP_S = 0.25;

/** `sglang_num_running_reqs` → the names Prometheus may hold it under (engine `:`, router `_`). */
export function promNames(metric: string): string[] {
  return metric.startsWith("sglang_") ? [`sglang:${metric.slice("sglang_".length)}`, metric] : [metric];
}

/** `{__name__=~"sglang:x|sglang_x",run_name="q"}` */
export function seriesSelector(metric: string, matchers: readonly string[]): string {
  const names = promNames(metric).join("|");
  return `{${[`__name__=~"${names}"`, ...matchers].join(",")}}`;
}

/** Grouping labels of a fold (the engine, its type, and dp_rank / le when asked). */
export function groupLabels(perDpRank: boolean, le = false): string[] {
  return ["instance", "worker_addr", "engine_type", ...(perDpRank ? ["dp_rank"] : []), ...(le ? ["le"] : [])];
}

export interface FoldQuery {
  /** folded values at each step point */
  value: string;
  /** scrape time of the newest sample each step point saw */
  ts: string;
}

export function foldQuery(metric: string, matchers: readonly string[], agg: "sum" | "avg", by: readonly string[]): FoldQuery {
  const sel = seriesSelector(metric, matchers);
  const g = by.join(", ");
  return { value: `${agg} by (${g}) (${sel})`, ts: `max by (${g}) (timestamp(${sel}))` };
}

/**
 * Scrape times per target from its one `up` series (successful scrapes only): every sample
 * of a scrape carries the scrape's time, and `timestamp()` costs Prometheus per series and
 * step (18 s for a 66-series histogram over 2000 steps on a loaded host, 0.5 s for `up`).
 * Targets whose `up` the selector does not match (a `run_name` added by metric relabeling)
 * fall back to `FoldQuery.ts`.
 */
export function targetStampQuery(matchers: readonly string[]): string {
  const up = `up{${matchers.join(",")}}`;
  return `max by (instance) (timestamp(${up}) and on (instance, job) (${up} == 1))`;
}

/**
 * Step of a range query over [t0, t1] answering `maxPoints` buckets: the window over the
 * buckets, never under MIN_STEP_S, and never more than Prometheus' 11,000 points; in whole
 * milliseconds (rounded up).
 */
export function chooseStep(t0: number, t1: number, maxPoints: number): number {
  const span = Math.max(0, t1 - t0);
  const step = Math.max(MIN_STEP_S, span / Math.max(1, maxPoints - 1), span / (MAX_RANGE_POINTS - 1));
  return Math.ceil(step * 1000 - 1e-6) / 1000;
}
