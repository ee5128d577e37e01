/**
 * Cold advisory broken into stages (fresh process): `npx tsx lib/store/telemetry/perf/stages.ts RUN CACHE T0 T1`.
 */
import { mfuSummary, stallAdvisories } from "@/lib/advisory";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore } from "@/lib/store/telemetry";
import { engineSeries } from "@/lib/timeline/engine";
import { phaseSource } from "@/lib/timeline/phases";

const [run, cacheDir, a, b] = process.argv.slice(2) as [string, string, string, string];
const t0 = Number(a);
const t1 = Number(b);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let last = cpu();
let lastW = performance.now();
const lap = (name: string) => {
  const c = cpu();
  const w = performance.now();
  console.log(`${name.padEnd(28)} cpu ${(c - last).toFixed(1).padStart(7)} ms  wall ${(w - lastW).toFixed(1).padStart(7)} ms`);
  last = c;
  lastW = w;
};
const store = openMetricStore(run, { follow: false, cacheDir });
lap("open");
await mfuSummary(store);
lap("mfuSummary (metrics.jsonl)");
const range = (await store.timeRange())!;
lap("timeRange");
const src = await phaseSource(store, null);
lap("phaseSource(null)");
stallAdvisories(src, range[1], store.meta()?.start_ts ?? -Infinity);
lap("stall");
await store.engine.hasData();
await engineSeries(store, "sglang_num_running_reqs", t0, t1, 2000, false);
lap("running (window)");
await engineSeries(store, "sglang_token_usage", t0, t1, 2000, false);
lap("token_usage (window)");
await engineSeries(store, "sglang_num_requests_total", null, null, 2000, false);
lap("requests_total (run)");
await engineSeries(store, "sglang_num_aborted_requests_total", null, null, 2000, false);
lap("aborted_total (run)");
await openDumpReader(run).listRolloutIds();
lap("dumps.listRolloutIds");
