/**
 * The warm-up's read-ahead of the timeline's first screen (lib/timeline/warm.ts): it adopts
 * the newest 4 h of cached GPU, phase and engine blocks and the default overlay's parts,
 * parses nothing, and leaves every answer as a store without it gives.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TIMELINE_OVERLAYS } from "@/lib/contracts/timeline-view";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { makeTmpDir, phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { openMetricStore } from "@/lib/store/telemetry";
import { engineSeries } from "@/lib/timeline/engine";
import { fleet, heatmap } from "@/lib/timeline/heatmap";
import { outliers } from "@/lib/timeline/outliers";
import { warmTimelineWindow } from "@/lib/timeline/warm";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = (prefix?: string) => {
  const d = makeTmpDir(prefix);
  dirs.push(d);
  return d;
};

const H = 3600;
const T0 = 1_764_000_000 - (1_764_000_000 % H); // an hour boundary
const METRIC = TIMELINE_OVERLAYS[0].metric;

/** Six hours: 2 GPUs every 60 s, a phase per 10 min, two engines' default overlay and another metric every 30 s. */
function sixHours(): RunBuilder {
  const b = new RunBuilder(tmp());
  const gpu = [];
  for (let t = 0; t < 6 * H; t += 60)
    for (const g of [0, 1]) gpu.push({ ts: T0 + t + 0.25, node: "10.0.0.1", gpu: g, util: (t / 60 + g * 7) % 101, mem_mb: 1000 + g, power_w: 200 + ((t / 60) % 50) });
  const phases = [];
  for (let t = 0; t < 6 * H; t += 600) phases.push(phase(t % 1200 === 0 ? "actor_train" : "rollout", T0 + t, T0 + t + 590, { gpus: [0, 1] }));
  const engine = [];
  for (let t = 0; t < 6 * H; t += 30)
    for (const port of [30000, 30001]) {
      engine.push({ ts: T0 + t + 0.5, addr: `http://10.0.0.1:${port}`, metric: METRIC, value: (t / 30 + port) % 17 });
      engine.push({ ts: T0 + t + 0.5, addr: `http://10.0.0.1:${port}`, metric: "sglang_token_usage", value: ((t / 30) % 10) / 10 });
    }
  return b.gpu(...gpu).phases(...phases).engine(...engine);
}

const open = (b: RunBuilder, cacheDir?: string) => openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });

/** What the timeline's first screen asks, over the newest 4 h. */
async function firstScreen(store: ReturnType<typeof open>) {
  const [, t1] = (await store.timeRange())!;
  const t0 = t1 - 4 * H;
  return {
    engine: await engineSeries(store, METRIC, t0, t1, 4000, false),
    util: await heatmap(store, "util", t0, t1, 240, null),
    phase: await heatmap(store, "phase", t0, t1, 240, null),
    fleet: await fleet(store, t0, t1, 240),
    outliers: await outliers(store, "lowest_util", t0, t1, 10),
  };
}

describe("warmTimelineWindow", () => {
  it("adopts the newest 4 h of cached blocks and the default overlay's parts; answers unchanged", async () => {
    const b = sixHours();
    const cacheDir = tmp("rlboard-cache-");
    const filler = open(b, cacheDir);
    await Promise.all([filler.gpuUtil.window(null, null), filler.phases.window(null, null), filler.engine.window(null, null)]);
    await flushBinaryCache();

    const store = open(b, cacheDir);
    // [t1 − 4 h, t1] with t1 in hour 5 overlaps hours 1–5
    expect(await warmTimelineWindow(store)).toEqual({ gpuUtil: 5, phases: 5, engine: 5 });
    const metricId = store.dicts.metrics.lookup(METRIC)!;
    const warmed = await store.engine.cachedWindow(T0 + H, null);
    expect(warmed).toHaveLength(5);
    for (const blk of warmed) expect([...blk.derived.keys()]).toContain(`parts:${metricId}:false`);
    const other = store.dicts.metrics.lookup("sglang_token_usage")!;
    for (const blk of warmed) expect([...blk.derived.keys()]).not.toContain(`parts:${other}:false`);
    // the GPU blocks' per-lane util totals are kept (the outliers proposal reads them)
    const gpu = await store.gpuUtil.cachedWindow(T0 + H, null);
    expect(gpu.map((blk) => blk.hasUtilTotals())).toEqual([true, true, true, true, true]);
    expect((await open(b, cacheDir).gpuUtil.cachedWindow(T0 + H, null)).some((blk) => blk.hasUtilTotals())).toBe(false);

    const expected = await firstScreen(open(b));
    expect(expected.engine.length).toBe(2);
    expect(await firstScreen(store)).toEqual(expected);
  });

  it("parses nothing where the data dir has no cache yet", async () => {
    const b = sixHours();
    const cacheDir = tmp("rlboard-cache-");
    const store = open(b, cacheDir);
    expect(await warmTimelineWindow(store)).toEqual({ gpuUtil: 0, phases: 0, engine: 0 });
    await flushBinaryCache();
    for (const s of ["gpu_util", "phases", "engine_series"]) expect(fs.existsSync(path.join(cacheDir, s))).toBe(false);
    // the first query reads (and caches) as without a warm-up
    expect(await firstScreen(store)).toEqual(await firstScreen(open(b)));
  });

  it("does nothing for a run without telemetry or a store without a cache dir", async () => {
    expect(await warmTimelineWindow(open(new RunBuilder(tmp())))).toEqual({ gpuUtil: 0, phases: 0, engine: 0 });
    expect(await warmTimelineWindow(open(sixHours()))).toEqual({ gpuUtil: 0, phases: 0, engine: 0 });
  });
});
