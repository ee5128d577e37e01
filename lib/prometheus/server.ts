/**
 * The server-side binding of lib/prometheus (docs/api.md 8.6 "Source: Prometheus"): which
 * run reads its engine series from which Prometheus series. A run does when the server was
 * started with `--prometheus URL` and the run has a selector — `--prometheus-run
 * RUN_ID=SELECTOR` (wins) or its `dashboard/prometheus.json` (docs/formats.md §4.15).
 * Otherwise (null) engine series come from the collector's files.
 *
 * Resolved per store and kept PROBE_TTL_MS, so a selector file added while the server runs
 * is picked up and a request costs no stat call. A malformed file is a 500 `corrupt_file`
 * naming it and what is wrong.
 */
import path from "node:path";
import { corruptFile } from "@/lib/contracts/errors";
import { serverEnv } from "@/lib/env";
import { PromRunSource } from "@/lib/prometheus/source";
import { parseSelectorArg } from "@/lib/prometheus/selector";
import { parsePrometheusRun, PROMETHEUS_RUN_FILE } from "@/lib/store/format/prometheus-run";
import type { MetricStore } from "@/lib/store/telemetry";

export const PROBE_TTL_MS = 2000;
const SELECTOR_REL = `dashboard/${PROMETHEUS_RUN_FILE}`;

const probes = new WeakMap<MetricStore, { at: number; key: string; source: Promise<PromRunSource | null> }>();

/** The run's Prometheus source, or null when its engine series come from files. */
export function prometheusSourceFor(store: MetricStore): Promise<PromRunSource | null> {
  const cfg = serverEnv().prometheus;
  if (!cfg) return Promise.resolve(null);
  const key = JSON.stringify(cfg);
  const now = performance.now();
  const hit = probes.get(store);
  if (hit && hit.key === key && now - hit.at < PROBE_TTL_MS) return hit.source;
  const source = resolve(store, cfg);
  probes.set(store, { at: now, key, source });
  source.catch(() => probes.delete(store));
  return source;
}

async function resolve(store: MetricStore, cfg: NonNullable<ReturnType<typeof serverEnv>["prometheus"]>): Promise<PromRunSource | null> {
  const common = { url: cfg.url, timeoutMs: cfg.timeoutMs, runRange: () => runRange(store) };
  const fromCli = await cliSelector(store, cfg.runs);
  if (fromCli) return new PromRunSource({ ...common, selector: parseSelectorArg(fromCli), origin: "--prometheus-run" });
  const st = await store.fs.statOrNull(SELECTOR_REL);
  if (!st?.isFile()) return null;
  const text = (await store.fs.readFile(SELECTOR_REL)).toString("utf8");
  try {
    return new PromRunSource({ ...common, selector: parsePrometheusRun(text), origin: SELECTOR_REL });
  } catch (err) {
    throw corruptFile(SELECTOR_REL, (err as Error).message, err);
  }
}

/**
 * The whole-run window of a Prometheus-read run: its files' time range, widened to start at
 * meta.json's `start_ts` (a run whose engine series live only in Prometheus may have no
 * other files); null when neither exists.
 */
async function runRange(store: MetricStore): Promise<[number, number] | null> {
  const range = await store.timeRange();
  const start = store.meta()?.start_ts;
  if (typeof start !== "number" || !Number.isFinite(start)) return range;
  if (range) return [Math.min(start, range[0]), range[1]];
  return [start, Math.max(start, Date.now() / 1000)];
}

/** The `--prometheus-run` selector whose run id names this store's directory. */
async function cliSelector(store: MetricStore, runs: Record<string, string>): Promise<string | null> {
  const ids = Object.keys(runs);
  if (ids.length === 0) return null;
  // Loaded only when selectors are given on the command line (the run index lives there).
  const { getRegistry } = await import("@/lib/server/runs/context");
  const registry = getRegistry();
  for (const id of ids) {
    const run = registry.find(id);
    if (run && path.resolve(run.realDir) === path.resolve(store.runDir)) return runs[id]!;
  }
  return null;
}
