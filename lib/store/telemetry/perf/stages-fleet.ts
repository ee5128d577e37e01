/** Cold fleet broken into stages: `npx tsx lib/store/telemetry/perf/stages-fleet.ts RUN CACHE T0 T1`. */
import { openMetricStore } from "@/lib/store/telemetry";
import { fleet, heatmap } from "@/lib/timeline/heatmap";
import { laneIntervals, phaseSource } from "@/lib/timeline/phases";

const [run, cacheDir, a, b] = process.argv.slice(2) as [string, string, string, string];
const t0 = Number(a);
const t1 = Number(b);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let last = cpu();
const lap = (name: string) => {
  const c = cpu();
  console.log(`${name.padEnd(28)} cpu ${(c - last).toFixed(1).padStart(7)} ms`);
  last = c;
};
const store = openMetricStore(run, { follow: false, cacheDir });
lap("open");
await store.timeRange();
lap("timeRange");
await store.laneIndex();
await store.topology();
lap("lanes+topology");
await phaseSource(store, t1);
lap("phaseSource");
await laneIntervals(store, t0, t1, null);
lap("laneIntervals");
await heatmap(store, "phase", t0, t1, 600, null);
lap("heatmap phase (2nd intervals)");
await store.gpuUtil.window(t0, t1);
lap("gpu blocks");
await fleet(store, t0, t1, 600);
lap("fleet (all cached but band)");
