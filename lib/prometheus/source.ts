/**
 * One run's engine series read from Prometheus (docs/api.md 8.6 "Source: Prometheus"):
 * the folded parts of a raw metric over a window (the same `Part`s the collector's files
 * give, one point per scrape at its scrape time), and the catalog of what Prometheus holds
 * for the run. lib/timeline/engine.ts derives rates, means and quantiles from the parts.
 */
import { SGLANG_HISTORY_METRICS } from "@/lib/store/format";
import type { Part } from "@/lib/store/telemetry";
import { MAX_RANGE_POINTS, PromClient } from "@/lib/prometheus/client";
import { partsFromMatrices, type PromPart } from "@/lib/prometheus/fold";
import { chooseStep, foldQuery, groupLabels, targetStampQuery } from "@/lib/prometheus/query";
import { describeSelector, selectorMatchers, type PrometheusRunSelector } from "@/lib/prometheus/selector";

const KNOWN = new Set(SGLANG_HISTORY_METRICS);
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Window used when the request and the run's files give none (s). */
export const DEFAULT_WINDOW_S = 14_400;

export interface PromRunSourceOptions {
  url: string;
  selector: PrometheusRunSelector;
  timeoutMs?: number;
  /** Where the selector came from, for messages (`dashboard/prometheus.json`, `--prometheus-run`). */
  origin: string;
  /** The run's own time range (its files), used when a window end is not given. */
  runRange?: () => Promise<[number, number] | null>;
  now?: () => number;
}

export class PromRunSource {
  readonly client: PromClient;
  readonly selector: PrometheusRunSelector;
  readonly matchers: string[];
  readonly origin: string;
  private readonly runRange: () => Promise<[number, number] | null>;
  private readonly now: () => number;

  constructor(opts: PromRunSourceOptions) {
    this.client = new PromClient({ url: opts.url, timeoutMs: opts.timeoutMs });
    this.selector = opts.selector;
    this.matchers = selectorMatchers(opts.selector);
    this.origin = opts.origin;
    this.runRange = opts.runRange ?? (async () => null);
    this.now = opts.now ?? (() => Date.now() / 1000);
  }

  /** `url run_name=…` — what a message names. */
  describe(): string {
    return `${this.client.url} (${describeSelector(this.selector)} from ${this.origin})`;
  }

  /** The window a request means: given ends, else the run's range, else the last DEFAULT_WINDOW_S. */
  async window(t0: number | null, t1: number | null): Promise<[number, number]> {
    if (t0 !== null && t1 !== null) return [t0, t1];
    const range = t0 === null || t1 === null ? await this.runRange() : null;
    const hi = t1 ?? range?.[1] ?? this.now();
    const lo = t0 ?? range?.[0] ?? hi - DEFAULT_WINDOW_S;
    return [Math.min(lo, hi), hi];
  }

  /**
   * Folded parts of one raw metric (normalised name, `sglang_x`) over the window, one point
   * per scrape; `_bucket` metrics keep their `le` (PromPart.le). `maxPoints` sets the step.
   */
  async parts(metric: string, t0: number | null, t1: number | null, perDpRank: boolean, maxPoints: number, mean: boolean): Promise<PromPart[]> {
    // Only a metric NAME goes into the query: anything else could widen the selector.
    if (!METRIC_NAME.test(metric)) return [];
    const [lo, hi] = await this.window(t0, t1);
    const step = chooseStep(lo, hi, Math.min(maxPoints, MAX_RANGE_POINTS));
    const q = foldQuery(metric, this.matchers, mean ? "avg" : "sum", groupLabels(perDpRank, metric.endsWith("_bucket")));
    const [values, targets] = await Promise.all([this.client.queryRange(q.value, lo, hi, step), this.client.queryRange(targetStampQuery(this.matchers), lo, hi, step)]);
    const dated = new Set(targets.map((t) => t.metric.instance));
    const stamps = values.every((v) => dated.has(v.metric.instance)) ? targets : [...targets, ...(await this.client.queryRange(q.ts, lo, hi, step))];
    const parts = partsFromMatrices(values, stamps);
    // Both ends inclusive (8.6): the grid may start before the first scrape of the window.
    return parts
      .map((p) => clip(p, lo, hi))
      .filter((p): p is PromPart => p !== null);
  }

  /** Known raw names Prometheus holds series of for this run (normalised `:` → `_`), sorted. */
  async rawNames(): Promise<string[]> {
    const match = `{${[`__name__=~"sglang[:_].+"`, ...this.matchers].join(",")}}`;
    const names = await this.client.metricNames(match);
    const out = new Set<string>();
    for (const n of names) {
      const norm = n.replaceAll(":", "_");
      if (KNOWN.has(norm)) out.add(norm);
    }
    return [...out].sort();
  }
}

function clip(p: PromPart, lo: number, hi: number): PromPart | null {
  let a = 0;
  while (a < p.ts.length && p.ts[a]! < lo) a++;
  let z = p.ts.length;
  while (z > a && p.ts[z - 1]! > hi) z--;
  if (z <= a) return null;
  if (a === 0 && z === p.ts.length) return p;
  return { ...p, ts: p.ts.slice(a, z), value: p.value.slice(a, z) };
}

export type { Part };
