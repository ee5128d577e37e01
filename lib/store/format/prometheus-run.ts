/**
 * `dashboard/prometheus.json` (docs/formats.md §4.15): which series of the server's
 * Prometheus (`serve --prometheus URL`) belong to this run's engines. Written by a person or
 * a launcher script, never by the collector; read by lib/prometheus/server.ts.
 *
 *   {"run_name": "qwen-grpo"}                             series labelled run_name="qwen-grpo"
 *   {"job": "sglang-engines"}                             every series of that scrape job
 *   {"job": "sglang", "instance": ["10.0.0.1:15000", "10.0.0.2:15000"]}
 *
 * At least one of `run_name`, `job`, `instance` (all given ones must match). Unknown keys
 * are an error, so a typo never silently widens the selection. Pure: no file I/O.
 */
import { z } from "zod";

export const PROMETHEUS_RUN_FILE = "prometheus.json";

const Value = z.string().min(1).max(512);

export const PrometheusRunFile = z
  .object({
    run_name: Value.optional(),
    job: Value.optional(),
    instance: z.union([Value, z.array(Value).min(1).max(256)]).optional(),
  })
  .strict()
  .refine((o) => o.run_name !== undefined || o.job !== undefined || o.instance !== undefined, "give at least one of run_name, job, instance");

/** The selector as label → allowed values (one value: equality; several: any of them). */
export type PrometheusRunSelector = Partial<Record<"run_name" | "job" | "instance", string[]>>;

/** Parse the file's text; throws an Error whose message says what is wrong (no bytes). */
export function parsePrometheusRun(text: string): PrometheusRunSelector {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const r = PrometheusRunFile.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${i?.path.length ? `${i.path.join(".")}: ` : ""}${i?.message ?? "invalid"}`);
  }
  const out: PrometheusRunSelector = {};
  if (r.data.run_name !== undefined) out.run_name = [r.data.run_name];
  if (r.data.job !== undefined) out.job = [r.data.job];
  if (r.data.instance !== undefined) out.instance = typeof r.data.instance === "string" ? [r.data.instance] : r.data.instance;
  return out;
}
