/**
 * One bench measurement in a fresh process: `node --import tsx bench/probe.ts '<json task>'`
 * prints one JSON line with the figures. Fresh processes are what "cold" means here: no
 * parsed block, memo or LRU survives from an earlier measurement — only what the product
 * itself persists in its data dir (binary columns of closed partitions, summary caches).
 *
 * Timings start after module loading (Node + tsx startup is reported separately as
 * `bootMs`), and use the same lib functions the API routes call.
 */
import path from "node:path";
import { getAdvisory } from "@/lib/advisory";
import { GetEngineSeriesQuery, GetFleetQuery, GetGpuQuery, GetHeatmapQuery, GetPhasesQuery } from "@/lib/contracts/telemetry";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { getEngineSeries, getFleet, getGpu, getHeatmapFrame, getPhases } from "@/lib/timeline/api";
import { median } from "./stats";

export const QUERIES = ["phases", "gpu32", "fleet", "heatmap_util", "advisory"] as const;
export type QueryName = (typeof QUERIES)[number];

export type ProbeTask =
  | { kind: "cold"; run: string; cacheDir: string | null; query: QueryName; t0: number; t1: number }
  | { kind: "warm"; run: string; cacheDir: string | null; t0: number; t1: number; repeat: number }
  | { kind: "prime"; run: string; cacheDir: string }
  | { kind: "ready"; run: string; cacheDir: string | null }
  | { kind: "dumps"; dir: string; cacheDir: string; op: "summary" | "tokens"; rolloutId: number; sample: number; repeat: number };

const bootMs = performance.now();

function openStore(run: string, cacheDir: string | null): MetricStore {
  return openMetricStore(run, { follow: false, ...(cacheDir ? { cacheDir: path.join(cacheDir, "telemetry") } : {}) });
}

/** Run one named query the way its route does (query parsed by the route's contract). */
export async function runQuery(store: MetricStore, run: string, q: QueryName, t0: number, t1: number): Promise<number> {
  const w = { t0: String(t0), t1: String(t1) };
  switch (q) {
    case "phases":
      return (await getPhases(store, GetPhasesQuery.parse(w))).phases.length;
    case "gpu32":
      return Object.keys((await getGpu(store, GetGpuQuery.parse({ ...w, lanes: "g:0-31" }))).lanes).length;
    case "fleet":
      return (await getFleet(store, GetFleetQuery.parse(w))).lanes;
    case "heatmap_util":
      return (await getHeatmapFrame(store, GetHeatmapQuery.parse({ ...w, metric: "util" }))).byteLength;
    case "advisory":
      return (await getAdvisory({ store, dumps: openDumpReader(run), settings: { lowMfuThreshold: 0.15 } }, { t0, t1 })).advisories.length;
  }
}


/** Bytes and rows of the gpu_util / engine_series column blocks resident for a window. */
async function residentColumns(store: MetricStore, run: string, t0: number, t1: number) {
  let gpuBytes = 0;
  let gpuRows = 0;
  for (const b of await store.gpuUtil.window(t0, t1)) {
    gpuBytes += b.byteLength();
    gpuRows += b.rows;
  }
  // Engine rows: with the binary cache, engine queries are answered from cached folded
  // parts and no raw column is resident, so the raw columns are measured on a store
  // without the cache, after the timeline overlay's query over the same window.
  const raw = openStore(run, null);
  await getEngineSeries(raw, GetEngineSeriesQuery.parse({ metric: "sglang_num_running_reqs", t0: String(t0), t1: String(t1), max_points: "4000" }));
  let engBytes = 0;
  let engRows = 0;
  for (const b of await raw.engine.window(t0, t1)) {
    engBytes += b.byteLength();
    for (const c of b.metrics.values()) engRows += c.rows;
  }
  return { gpuBytes, gpuRows, engBytes, engRows };
}

async function main(task: ProbeTask): Promise<Record<string, unknown>> {
  switch (task.kind) {
    case "cold": {
      const t = performance.now();
      const store = openStore(task.run, task.cacheDir);
      const n = await runQuery(store, task.run, task.query, task.t0, task.t1);
      return { ms: performance.now() - t, n };
    }
    case "warm": {
      const store = openStore(task.run, task.cacheDir);
      const first: Record<string, number> = {};
      const warm: Record<string, number> = {};
      for (const q of QUERIES) {
        const t = performance.now();
        await runQuery(store, task.run, q, task.t0, task.t1);
        first[q] = performance.now() - t;
      }
      for (const q of QUERIES) {
        const times: number[] = [];
        // The window slides a little each time (a following dashboard does that), so no
        // result memo can answer; parsed partitions and dictionaries stay resident.
        for (let i = 1; i <= task.repeat; i++) {
          const shift = 7 * i;
          const t = performance.now();
          await runQuery(store, task.run, q, task.t0 - shift, task.t1 - shift);
          times.push(performance.now() - t);
        }
        warm[q] = median(times);
      }
      // RSS first: the column count below opens a second (uncached) store
      global.gc?.();
      const mem = process.memoryUsage();
      const cols = await residentColumns(store, task.run, task.t0, task.t1);
      return { first, warm, ...cols, rssMb: mem.rss / 1048576, heapMb: mem.heapUsed / 1048576, externalMb: mem.external / 1048576 };
    }
    case "prime": {
      const t = performance.now();
      const store = openStore(task.run, task.cacheDir);
      await store.gpuUtil.window(null, null);
      await store.engine.window(null, null);
      await store.phases.window(null, null);
      return { ms: performance.now() - t };
    }
    case "ready": {
      const t = performance.now();
      const store = openStore(task.run, task.cacheDir);
      store.meta();
      const lanes = (await store.laneIndex()).length;
      const range = (await store.timeRange())!;
      const tMeta = performance.now() - t;
      // The timeline's first screen: the utilisation carpet of the newest 4 h.
      await runQuery(store, task.run, "heatmap_util", range[1] - 14400, range[1]);
      const ms = performance.now() - t;
      return { ms, metaMs: tMeta, lanes, sinceProcessStartMs: performance.now() };
    }
    case "dumps": {
      const reader = openDumpReader(task.dir, { cacheDir: path.join(task.cacheDir, "dumps") });
      const once = async () => {
        const t = performance.now();
        if (task.op === "summary") await reader.summary(task.rolloutId, false);
        else await reader.tokens(task.rolloutId, task.sample, { start: 0, end: null });
        return performance.now() - t;
      };
      const first = await once();
      const again: number[] = [];
      for (let i = 0; i < task.repeat; i++) again.push(await once());
      return { first, warm: again.length ? median(again) : null };
    }
  }
}

if (process.argv[1]?.endsWith("probe.ts")) {
  const task = JSON.parse(process.argv[2] ?? "{}") as ProbeTask;
  main(task).then(
    (r) => {
      process.stdout.write(`${JSON.stringify({ ok: true, bootMs, ...r })}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stdout.write(`${JSON.stringify({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })}\n`);
      process.exit(1);
    },
  );
}
