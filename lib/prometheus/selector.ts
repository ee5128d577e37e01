/**
 * A run's Prometheus selector (docs/collector.md "Serving metrics from Prometheus"): the
 * command-line form `serve --prometheus-run RUN_ID=SELECTOR` and PromQL label matchers.
 *
 * SELECTOR on the command line is `label=value[|value…]` terms joined by `,`, with label one
 * of `run_name`, `job`, `instance`; a bare value means `run_name=value`:
 *   qwen-grpo                         → {run_name="qwen-grpo"}
 *   job=sglang,instance=10.0.0.1:15000|10.0.0.2:15000
 *                                     → {job="sglang",instance=~"10\\.0\\.0\\.1:15000|…"}
 * The file form is dashboard/prometheus.json (lib/store/format/prometheus-run.ts).
 */
import type { PrometheusRunSelector } from "@/lib/store/format/prometheus-run";

export type { PrometheusRunSelector };

const LABELS = new Set(["run_name", "job", "instance"]);

/** Parse the command-line form; throws an Error naming what is wrong. */
export function parseSelectorArg(text: string): PrometheusRunSelector {
  const s = text.trim();
  if (s === "") throw new Error("empty selector");
  if (!s.includes("=")) return { run_name: [s] };
  const out: PrometheusRunSelector = {};
  for (const term of s.split(",")) {
    const i = term.indexOf("=");
    if (i <= 0) throw new Error(`'${term}' is not label=value (labels: run_name, job, instance)`);
    const label = term.slice(0, i).trim();
    if (!LABELS.has(label)) throw new Error(`unknown label '${label}' (use run_name, job or instance)`);
    const values = term
      .slice(i + 1)
      .split("|")
      .map((v) => v.trim());
    if (values.some((v) => v === "")) throw new Error(`'${term}': empty value`);
    if (out[label as keyof PrometheusRunSelector]) throw new Error(`label '${label}' given twice`);
    out[label as keyof PrometheusRunSelector] = values;
  }
  return out;
}

/** A PromQL string literal (double-quoted; `\` and `"` and newlines escaped). */
export function promString(v: string): string {
  return `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** RE2 escape of a literal value (PromQL regex matchers are fully anchored RE2). */
export function reEscape(v: string): string {
  return v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Label matchers of a selector, sorted by label: `run_name="x"`, `instance=~"a|b"`. */
export function selectorMatchers(sel: PrometheusRunSelector): string[] {
  const out: string[] = [];
  for (const label of ["instance", "job", "run_name"] as const) {
    const values = sel[label];
    if (!values || values.length === 0) continue;
    out.push(values.length === 1 ? `${label}=${promString(values[0]!)}` : `${label}=~${promString(values.map(reEscape).join("|"))}`);
  }
  return out;
}

/** Short human form for messages: `run_name=qwen-grpo, job=sglang`. */
export function describeSelector(sel: PrometheusRunSelector): string {
  return (["run_name", "job", "instance"] as const)
    .filter((l) => sel[l]?.length)
    .map((l) => `${l}=${sel[l]!.join("|")}`)
    .join(", ");
}
