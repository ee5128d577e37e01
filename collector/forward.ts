/**
 * Names for the latest-value gauges the collector exposes on `/metrics` for
 * Prometheus and Grafana (docs/collector.md, "Prometheus and Grafana"; the
 * miles side is docs/formats.md §6.8).
 *
 * Two mappings of the same snapshot:
 *
 *   - miles-compatible: one gauge per key, named as miles' Prometheus
 *     collector names them — `miles_metric_` + the key with `/` and `-`
 *     replaced by `_` and `@` by `_at_` — with the single label `run_name`.
 *     The dashboard keys are `dashboard/gpu_{N}_{gpu}_util`,
 *     `dashboard/gpu_{N}_{gpu}_mem_mb`, `dashboard/engine_{A}_running_reqs`
 *     and `dashboard/phase_{name}_seconds`, where `{N}`/`{A}` drop `http://`
 *     and turn `.` and `:` into `_`; pushed training metrics keep their own
 *     key (`rollout/rewards_mean` → `miles_metric_rollout_rewards_mean`);
 *   - Prometheus-style: one family per quantity with `node`/`gpu`/`engine`/
 *     `phase`/`metric` labels plus `run_name` (rendered by self-metrics.ts).
 *
 * Any character the exposition format does not allow in a metric name
 * (`[a-zA-Z_:][a-zA-Z0-9_:]*`) or a label name (`[a-zA-Z_][a-zA-Z0-9_]*`) is
 * turned into `_` after miles' own replacements, so a phase or metric key
 * such as `perf/tokens.per_s` still yields a valid name.
 */
import { PyFloat } from "@/lib/store/format";

export const MILES_PREFIX = "miles_metric_";

/** `http://10.0.0.1:15000` → `10_0_0_1_15000` (miles' node / engine address part). */
export function milesAddrPart(addr: string): string {
  return addr.replaceAll("http://", "").replaceAll(".", "_").replaceAll(":", "_");
}

export const dashboardGpuKey = (node: string, gpu: number, quantity: "util" | "mem_mb"): string =>
  `dashboard/gpu_${milesAddrPart(node)}_${gpu}_${quantity}`;
export const dashboardEngineKey = (addr: string): string => `dashboard/engine_${milesAddrPart(addr)}_running_reqs`;
export const dashboardPhaseKey = (name: string): string => `dashboard/phase_${name}_seconds`;

const INVALID_METRIC_CHARS = /[^a-zA-Z0-9_:]/g;
const INVALID_LABEL_CHARS = /[^a-zA-Z0-9_]/g;

/** A key → its miles gauge name (`rollout/rewards_mean` → `miles_metric_rollout_rewards_mean`). */
export function milesMetricName(key: string): string {
  const mapped = key.replaceAll("/", "_").replaceAll("-", "_").replaceAll("@", "_at_");
  return MILES_PREFIX + mapped.replace(INVALID_METRIC_CHARS, "_");
}

/** Label names the Prometheus-style families set themselves. */
export const RESERVED_LABELS: ReadonlySet<string> = new Set(["engine", "metric", "run_name", "node", "gpu", "phase"]);

/**
 * A producer's label key (pushed engine samples may carry any string) as a
 * valid label name: invalid characters → `_`, a leading digit or a `__`
 * prefix (reserved by Prometheus) or one of our own label names gets a
 * `label_` prefix.
 */
export function promLabelName(key: string): string {
  let k = key.replace(INVALID_LABEL_CHARS, "_");
  if (k === "" || /^[0-9]/.test(k) || k.startsWith("__") || RESERVED_LABELS.has(k)) k = `label_${k}`;
  return k;
}

/**
 * A metrics-record value as a gauge value, or undefined when miles would
 * skip it: numbers (integral floats arrive as `PyFloat`) and bools (Python's
 * `bool` is an `int`, so miles forwards 1 / 0); strings are skipped.
 */
export function gaugeValue(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "boolean") return v ? 1 : 0;
  return undefined;
}

/** Escape HELP text (`\` and newline, per the exposition format). */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}
