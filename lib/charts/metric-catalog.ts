/**
 * Metric catalogue for the Metrics view: which category a key shows under, which step
 * axis it is fetched on, and the one-line description of its title (spec §2.2–2.4).
 */

export const SGLANG_CATEGORY = "sglang";
export const DUMP_CATEGORY = "dump";
const FIXED_ORDER = ["rollout", "perf", "train", "eval"];

/** Rollout-axis log-prob keys that are displayed with the training metrics. */
const SHOWN_UNDER_TRAIN = new Set([
  "rollout/log_probs",
  "rollout/ref_log_probs",
  "rollout/rollout_log_probs",
  "rollout/teacher_log_probs",
]);

export function categoryOf(key: string): string {
  if (SHOWN_UNDER_TRAIN.has(key)) return "train";
  const i = key.indexOf("/");
  return i < 0 ? key : key.slice(0, i);
}

/** The step axis a scalar key is logged on. */
export function axisForKey(key: string): string {
  if (SHOWN_UNDER_TRAIN.has(key)) return "rollout/step";
  if (key.startsWith("train/")) return "train/step";
  if (key.startsWith("eval/")) return "eval/step";
  return "rollout/step";
}

export interface Category {
  name: string;
  keys: string[];
  /** engine metrics are per-engine time series, not step series */
  kind: "scalar" | "engine";
}

/** Ordered categories: rollout, perf, train, eval, other prefixes A–Z, sglang, dump. */
export function buildCategories(metricKeys: readonly string[], engineKeys: readonly string[]): Category[] {
  const byCat = new Map<string, string[]>();
  for (const key of metricKeys) {
    const c = categoryOf(key);
    const list = byCat.get(c);
    if (list) list.push(key);
    else byCat.set(c, [key]);
  }
  const out: Category[] = [];
  for (const name of FIXED_ORDER) {
    const keys = byCat.get(name);
    if (keys) out.push({ name, keys, kind: "scalar" });
  }
  const rest = [...byCat.keys()].filter((c) => !FIXED_ORDER.includes(c) && c !== DUMP_CATEGORY).sort();
  for (const name of rest) out.push({ name, keys: byCat.get(name)!, kind: "scalar" });
  if (engineKeys.length > 0) out.push({ name: SGLANG_CATEGORY, keys: [...engineKeys], kind: "engine" });
  const dump = byCat.get(DUMP_CATEGORY);
  if (dump) out.push({ name: DUMP_CATEGORY, keys: dump, kind: "scalar" });
  return out;
}

/**
 * Filter keys: case-insensitive substring; several words must all match (so
 * "reward mean" finds `rollout/rewards_mean`).
 */
export function filterKeys(keys: readonly string[], filter: string): string[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...keys];
  return keys.filter((k) => {
    const lk = k.toLowerCase();
    return words.every((w) => lk.includes(w));
  });
}

/** Group keys by the step axis, preserving order: one request per axis. */
export function groupByAxis(keys: readonly string[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const k of keys) {
    const a = axisForKey(k);
    const list = m.get(a);
    if (list) list.push(k);
    else m.set(a, [k]);
  }
  return m;
}

const DESCRIPTIONS: [string, string][] = [
  ["teacher_log_probs", "distillation teacher log-prob"],
  ["ref_log_probs", "reference/KL-anchor policy log-prob"],
  ["rollout_log_probs", "engine log-prob at generation time"],
  ["log_probs", "trainer-recomputed log-prob"],
  ["ref_entropy", "reference-policy per-token entropy"],
  ["entropy", "trainer per-token entropy"],
  ["response_length", "response tokens"],
  ["reward", "scalar reward"],
  ["truncated", "hit the length/turn cap"],
  ["zero_std", "GRPO groups with ~0 reward std (no gradient)"],
  ["mean_abs_lp_diff", "mean absolute trainer-vs-rollout log-prob gap (staleness)"],
  ["mixed_version", "samples spanning more than one weight version"],
  ["step_time", "seconds per step"],
  ["wait_time_ratio", "idle share of the step"],
  ["cpu_memory", "host RSS in GB"],
  ["advantages", "group-normalised reward"],
  ["returns", "PG/value target"],
  ["grad_norm", "pre-clip global grad norm"],
  ["pg_clipfrac", "share of tokens clipped by PPO"],
  ["kl", "KL to reference"],
  ["loss", "training loss"],
  ["num_running_reqs", "concurrent engine requests"],
  ["gen_throughput", "generated tokens/s"],
  ["token_usage", "KV cache fill fraction"],
  ["cache_hit_rate", "prefix-cache hit rate"],
];

export function describeMetric(key: string): string | null {
  const i = key.indexOf("/");
  const tail = i < 0 ? key : key.slice(i + 1);
  for (const [pattern, text] of DESCRIPTIONS) if (tail.includes(pattern)) return text;
  return null;
}
