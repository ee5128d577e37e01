/**
 * Perf probe (not part of the product): one measurement in a fresh process.
 *
 *   node --import tsx lib/store/telemetry/perf/probe.ts '<json task>'
 *
 * Prints one JSON line: wall and CPU (user+system, `process.cpuUsage()`) milliseconds
 * of the measured part only (module loading excluded), plus RSS. `cold` opens the store
 * and runs one query; `warm` runs every query once, then `repeat` times each with the
 * window sliding by 7 s (so no result memo can answer) and reports medians.
 */
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import { getAdvisory } from "@/lib/advisory";
import { GetFleetQuery, GetGpuQuery, GetHeatmapQuery, GetPhasesQuery } from "@/lib/contracts/telemetry";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { getFleet, getGpu, getHeatmapFrame, getPhases } from "@/lib/timeline/api";
import { engineMetricNames, engineSeries } from "@/lib/timeline/engine";
import { gpuSeries } from "@/lib/timeline/gpu";
import { phasesByLane } from "@/lib/timeline/phases";

export const QUERIES = ["phases", "gpu32", "fleet", "heatmap_util", "advisory"] as const;
export type QueryName = (typeof QUERIES)[number];

export type PerfTask =
  | { kind: "cold"; run: string; cacheDir: string | null; query: QueryName; t0: number; t1: number }
  | { kind: "warm"; run: string; cacheDir: string | null; t0: number; t1: number; repeat: number }
  | { kind: "ready"; run: string; cacheDir: string | null }
  | { kind: "dump"; run: string; cacheDir: string | null; t0: number; t1: number; out: string }
  | { kind: "prime"; run: string; cacheDir: string };

export async function runQuery(store: MetricStore, run: string, q: QueryName, t0: number, t1: number): Promise<unknown> {
  const w = { t0: String(t0), t1: String(t1) };
  switch (q) {
    case "phases":
      return getPhases(store, GetPhasesQuery.parse(w));
    case "gpu32":
      return getGpu(store, GetGpuQuery.parse({ ...w, lanes: "g:0-31" }));
    case "fleet":
      return getFleet(store, GetFleetQuery.parse(w));
    case "heatmap_util":
      return Buffer.from(await getHeatmapFrame(store, GetHeatmapQuery.parse({ ...w, metric: "util" }))).toString("base64");
    case "advisory":
      return getAdvisory({ store, dumps: openDumpReader(run), settings: { lowMfuThreshold: 0.15 } }, { t0, t1 });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const open = (run: string, cacheDir: string | null) => openMetricStore(run, { follow: false, ...(cacheDir ? { cacheDir } : {}) });

async function measure(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  // PERF_PROF=file.cpuprofile: V8 CPU profile of the measured part only
  const prof = process.env.PERF_PROF;
  let session: Session | null = null;
  if (prof) {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
  }
  const c = process.cpuUsage();
  const t = performance.now();
  await fn();
  const wall = performance.now() - t;
  const d = process.cpuUsage(c);
  if (session && prof) {
    const { profile } = await session.post("Profiler.stop");
    fs.writeFileSync(prof, JSON.stringify(profile));
    session.disconnect();
  }
  return { wall, cpu: (d.user + d.system) / 1000 };
}

async function main(task: PerfTask): Promise<Record<string, unknown>> {
  switch (task.kind) {
    case "cold": {
      let result: unknown;
      const m = await measure(async () => {
        const store = open(task.run, task.cacheDir);
        result = await runQuery(store, task.run, task.query, task.t0, task.t1);
      });
      return { ...m, n: JSON.stringify(result).length };
    }
    case "ready": {
      const m = await measure(async () => {
        const store = open(task.run, task.cacheDir);
        store.meta();
        await store.laneIndex();
        const range = (await store.timeRange())!;
        await runQuery(store, task.run, "heatmap_util", range[1] - 14400, range[1]);
      });
      return { ...m, sinceProcessStart: performance.now() };
    }
    case "warm": {
      const store = open(task.run, task.cacheDir);
      const first: Record<string, unknown> = {};
      for (const q of QUERIES) first[q] = await measure(() => runQuery(store, task.run, q, task.t0, task.t1));
      const warm: Record<string, { wall: number; cpu: number }> = {};
      for (const q of QUERIES) {
        const walls: number[] = [];
        const cpus: number[] = [];
        for (let i = 1; i <= task.repeat; i++) {
          const s = 7 * i;
          const m = await measure(() => runQuery(store, task.run, q, task.t0 - s, task.t1 - s));
          walls.push(m.wall);
          cpus.push(m.cpu);
        }
        warm[q] = { wall: median(walls), cpu: median(cpus) };
      }
      let gpuBytes = 0;
      let gpuRows = 0;
      for (const b of await store.gpuUtil.window(task.t0, task.t1)) {
        gpuBytes += b.byteLength();
        gpuRows += b.rows;
      }
      let engBytes = 0;
      let engRows = 0;
      for (const b of await store.engine.window(task.t0, task.t1)) {
        engBytes += b.byteLength();
        for (const c of b.metrics.values()) engRows += c.rows;
      }
      global.gc?.();
      const mem = process.memoryUsage();
      return { first, warm, gpuBytes, gpuRows, engBytes, engRows, rssMb: mem.rss / 1048576, heapMb: mem.heapUsed / 1048576 };
    }
    case "prime": {
      const store = open(task.run, task.cacheDir);
      await Promise.all([store.gpuUtil.window(null, null), store.engine.window(null, null), store.phases.window(null, null)]);
      await new Promise((r) => setTimeout(r, 3000)); // cache writes are fire-and-forget
      return {};
    }
    case "dump": {
      // Every query's full result, for before/after identity checks.
      const store = open(task.run, task.cacheDir);
      const out: Record<string, unknown> = {};
      for (const q of QUERIES) out[q] = await runQuery(store, task.run, q, task.t0, task.t1);
      const range = (await store.timeRange())!;
      for (const q of QUERIES) out[`${q}:tail`] = await runQuery(store, task.run, q, range[1] - 14400, range[1]);
      // engine series: every catalog metric, whole run and window, folded and per dp rank
      const names = await engineMetricNames(store);
      for (const m of names)
        for (const dp of [false, true]) {
          out[`engine:${m}:${dp}:full`] = await engineSeries(store, m, null, null, 2000, dp);
          out[`engine:${m}:${dp}:win`] = await engineSeries(store, m, task.t0 + 0.5, task.t1 - 0.5, 500, dp);
        }
      out["phases:null"] = await phasesByLane(store, null, null, null);
      out["phases:lanes"] = await getPhases(store, GetPhasesQuery.parse({ t0: String(task.t0), t1: String(task.t1), lanes: "g:3-40" }));
      out["heatmap:phase"] = Buffer.from(await getHeatmapFrame(store, GetHeatmapQuery.parse({ t0: String(task.t0), t1: String(task.t1), metric: "phase" }))).toString("base64");
      out["heatmap:mem"] = Buffer.from(await getHeatmapFrame(store, GetHeatmapQuery.parse({ t0: String(task.t0), t1: String(task.t1), metric: "mem_mb", lanes: "every:3" }))).toString("base64");
      out["gpu:null"] = await gpuSeries(store, null, null, 3000, null);
      out["lanes:scan"] = await store.laneIndex();
      out["range"] = await store.timeRange();
      fs.writeFileSync(task.out, JSON.stringify(out));
      return {};
    }
  }
}

if (process.argv[1]?.endsWith("probe.ts")) {
  const task = JSON.parse(process.argv[2] ?? "{}") as PerfTask;
  main(task).then(
    (r) => {
      process.stdout.write(`${JSON.stringify({ ok: true, ...r })}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stdout.write(`${JSON.stringify({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })}\n`);
      process.exit(1);
    },
  );
}
