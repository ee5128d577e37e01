/**
 * The shortcuts must answer exactly like the straightforward computations they replace:
 *  - phase lanes from the whole-source index (second and later queries over the same
 *    files) vs the windowed pass of a fresh store, also on GPU indices off the pass's
 *    typed slot rows;
 *  - the phase heatmap painted from the pass's unsplit pool vs painting phases_by_lane
 *    lane by lane;
 *  - engine parts stitched from per-partition parts (and from folded parts stored in the
 *    binary cache) vs one pass over every raw row — including rows out of order, the same
 *    ts filed in two partitions, and a legacy flat file;
 *  - the util heatmap and the fleet band read from kept util peaks vs row by row;
 *  - GPU lanes counted from chunked lane counts (`laneCounts`) and read by lane (`laneRows`)
 *    vs a pass over every row, and queries that interleave vs each alone (they share kept
 *    columns).
 */
import fs from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openMetricStore, type MetricStore, type PhaseBlock, type PhaseEvent } from "@/lib/store/telemetry";
import { buildLaneCounts, GpuStage, laneCountBound } from "@/lib/store/telemetry/blocks";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { ENGINE_MEAN_AGGREGATED_METRICS, partsOf } from "@/lib/store/telemetry/engine-parts";
import { partitionKey } from "@/lib/store/format";
import { makeTmpDir, phase, pyJsonLine, RunBuilder, type EngineRow, type GpuRow } from "@/lib/store/telemetry/testing";
import { engineParts } from "@/lib/timeline/engine";
import { gpuSeries } from "@/lib/timeline/gpu";
import { fleet, heatmap, IDLE_PHASES } from "@/lib/timeline/heatmap";
import { resolveLanes } from "@/lib/timeline/lanes";
import { outliers } from "@/lib/timeline/outliers";
import { laneIntervals, phaseSource, phasesByLane } from "@/lib/timeline/phases";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function run(): RunBuilder {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  return b;
}
const open = (b: RunBuilder, cacheDir?: string) =>
  openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, ...(cacheDir ? { cacheDir } : {}) });

function rng(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

const H = 3600;
const T0 = 1_000_000 * H; // an hour boundary

/** A run of these GPU rows whose closed hours are in a fresh binary cache dir. */
async function gpuRunCached(rows: readonly GpuRow[]): Promise<{ b: RunBuilder; cacheDir: string }> {
  const b = run().gpu(...rows);
  const cacheDir = makeTmpDir("rlboard-cache-");
  dirs.push(cacheDir);
  await open(b, cacheDir).gpuUtil.window(null, null);
  await flushBinaryCache();
  return { b, cacheDir };
}

/** Several hours of nested train phases on 2 nodes × 4 GPUs, rollout-manager events, open markers. */
function phaseRun(seed: number): RunBuilder {
  const r = rng(seed);
  const evs: PhaseEvent[] = [];
  let t = T0 + 100;
  let step = 0;
  while (t < T0 + 5 * H) {
    evs.push(phase("rollout", t, t + 300 + r() * 200, { node: "10.0.0.9", gpus: [], rank: -1, role: "rollout_manager" }));
    for (let node = 1; node <= 2; node++)
      for (let g = 0; g < 4; g++) {
        const rank = (node - 1) * 4 + g;
        const o = { node: `10.0.0.${node}`, gpus: [g], rank };
        const a = t + 400 + r() * 50;
        const z = a + 600 + r() * 300;
        // the outer phase closes after the inner ones: out of t0 order in the file
        evs.push(phase("actor_train", a + 10, a + 200, o), phase("log_probs", a + 210, z - 10, o));
        evs.push(phase("train", a, -1, o), phase("train", a, z, o));
        if (r() < 0.3) evs.push(phase("train_wait", t + 350, t + 400, o));
        if (r() < 0.05) evs.push(phase("sleep", z, -1, o)); // never closes
        if (step % 7 === 3 && g === 1) evs.push(phase("update_weights", z, z, o)); // empty interval
      }
    t += 1000 + r() * 600;
    step++;
  }
  return run()
    .meta({ start_ts: T0 + 50 })
    .topology(
      { ts: T0 + 60, engines: [{ addr: "http://10.0.0.1:1", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 0], ["10.0.0.1", 1]], gpu_uuids: [null, null] }] },
      { ts: T0 + 2.5 * H, engines: [{ addr: "http://10.0.0.2:1", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.2", 2], ["10.0.0.1", 1]], gpu_uuids: [null, null] }] },
    )
    .phases(...evs);
}

describe("phase lanes from the whole-source index", () => {
  it("match a fresh store's windowed pass for random windows and selections", async () => {
    const b = phaseRun(7);
    const warm = open(b);
    const r = rng(99);
    const windows: [number | null, number | null][] = [
      [null, null],
      [T0 + H, null],
      [null, T0 + 2 * H],
      [T0 + 40, T0 + 60],
      [T0 + 5 * H, T0 + 6 * H],
      [NaN, T0 + H],
    ];
    for (let i = 0; i < 14; i++) {
      const a = T0 + r() * 5.5 * H;
      windows.push([a, a + r() * 3 * H]);
    }
    const lanes = await warm.laneIndex();
    for (const [w0, w1] of windows) {
      for (const grammar of [null, "node:10.0.0.1", "g:2-5,gpu:10.0.0.2:3"]) {
        const sel = grammar ? resolveLanes(grammar, lanes) : null;
        // twice on the warm store: the second answer comes from the index
        await laneIntervals(warm, w0, w1, sel);
        const viaIndex = await phasesByLane(warm, w0, w1, sel);
        const fresh = await phasesByLane(open(b), w0, w1, sel);
        expect(viaIndex, `${w0} ${w1} ${grammar}`).toEqual(fresh);
      }
      const hmWarm = await heatmap(warm, "phase", w0 ?? T0, w1 ?? T0 + 6 * H, 300, null).catch((e: Error) => e.message);
      const hmFresh = await heatmap(open(b), "phase", w0 ?? T0, w1 ?? T0 + 6 * H, 300, null).catch((e: Error) => e.message);
      expect(hmWarm).toEqual(hmFresh);
    }
  });
});

describe("phase lanes of GPU indices off the typed fast path", () => {
  it("keep one lane per (node, gpu) in the pass and in the index, whatever the index", async () => {
    // laneIntervals finds the slot of GPU 0…15 in a typed row per node, any other index
    // (negative, large) through its Map; -0 is GPU 0's lane, as in the Map (a fractional
    // index is a malformed record: the reader drops it)
    const gpus = [3, 15, 16, 65_536, -1, -0, 0, 70_000, 2 ** 31, 15];
    const evs: PhaseEvent[] = [];
    gpus.forEach((g, i) => {
      for (const node of ["10.0.0.1", "10.0.0.2"]) evs.push(phase("train", T0 + 10 * i, T0 + 10 * i + 5, { node, gpus: [g], rank: i }));
    });
    evs.push(phase("train", T0 + 200, T0 + 205, { node: "10.0.0.1", gpus: [1, 2], rank: 99 }));
    const b = run().phases(...evs);
    const store = open(b);
    const pass = await phasesByLane(store, null, null, null);
    const viaIndex = await phasesByLane(store, null, null, null);
    expect(viaIndex).toEqual(pass);
    const lanes = [...new Set(pass.map((p) => `${p.node} ${p.gpu}`))];
    const want = [-1, 0, 1, 2, 3, 15, 16, 65_536, 70_000, 2 ** 31];
    expect(lanes).toEqual([...want.map((g) => `10.0.0.1 ${g}`), ...want.filter((g) => g !== 1 && g !== 2).map((g) => `10.0.0.2 ${g}`)]);
    // GPU 15 of each node: both of its events, in one lane
    expect(pass.filter((p) => p.node === "10.0.0.2" && p.gpu === 15).map((p) => p.rank)).toEqual([1, 9]);
    expect(pass.filter((p) => p.node === "10.0.0.1" && p.gpu === 0).map((p) => p.rank)).toEqual([5, 6]);
    // a selection leaves the other lanes out on both paths
    const sel = resolveLanes("gpu:10.0.0.2:15,gpu:10.0.0.1:16", await store.laneIndex());
    const picked = await phasesByLane(open(b), null, null, sel);
    expect(picked.map((p) => `${p.node} ${p.gpu} ${p.rank}`)).toEqual(["10.0.0.1 16 2", "10.0.0.2 15 1", "10.0.0.2 15 9"]);
  });
});

describe("the phase heatmap painted from the unsplit pass", () => {
  it("shows in every cell what painting each lane in phases_by_lane order shows, ties included", async () => {
    // t0 on a coarse grid: many intervals of a lane start together and share cells
    const r = rng(31);
    const names = ["train", "actor_train", "log_probs", "train_wait", "sleep", "update_weights"];
    const evs: PhaseEvent[] = [];
    for (let i = 0; i < 900; i++) {
      const node = `10.0.0.${1 + Math.floor(r() * 2)}`;
      const gpu = Math.floor(r() * 3);
      const a = T0 + Math.floor(r() * 40) * 90;
      const z = r() < 0.1 ? -1 : a + Math.floor(r() * 4) * 45; // OPEN markers, empty intervals
      evs.push(phase(names[Math.floor(r() * names.length)]!, a, z, { node, gpus: [gpu], rank: i }));
    }
    evs.push(phase("rollout", T0 + 500, T0 + 1900, { node: "10.0.0.9", gpus: [], rank: -1, role: "rollout_manager" }));
    const b = run()
      .meta({ start_ts: T0 - 30 })
      .topology({ ts: T0, engines: [{ addr: "http://10.0.0.1:1", worker_type: "regular", engine_rank: 0, gpus: [["10.0.0.1", 0], ["10.0.0.1", 1]], gpu_uuids: [null, null] }] })
      .gpu(...[0, 1, 2].flatMap((gpu) => ["10.0.0.1", "10.0.0.2"].map((node): GpuRow => ({ ts: T0, node, gpu, util: 1, mem_mb: 1, power_w: 1 }))))
      .phases(...evs);
    for (const [w0, w1, X] of [[T0 - 60, T0 + 3700, 300], [T0 + 400, T0 + 1000, 97], [T0 + 1000, T0 + 1001, 5]] as const) {
      const hm = await heatmap(open(b), "phase", w0, w1, X, null); // a fresh store: the pass, unsplit
      const lanes = await phasesByLane(open(b), w0, w1, null);
      const palette = ["", ...[...new Set(lanes.map((l) => l.name))].sort()];
      expect(hm.palette).toEqual(palette);
      const want = new Uint8Array(hm.rows.length * X);
      const cell = (t: number) => Math.min(X - 1, Math.max(0, Math.trunc(((t - w0) / (w1 - w0)) * X)));
      for (const idlePass of [true, false])
        for (const l of lanes) {
          if (IDLE_PHASES.has(l.name) !== idlePass) continue;
          const row = hm.rows.findIndex((x) => "node" in x && x.node === l.node && x.gpu === l.gpu);
          if (row < 0) continue;
          want.fill(palette.indexOf(l.name), row * X + cell(Math.max(l.t0, w0)), row * X + cell(Math.min(l.t1, w1)) + 1);
        }
      expect(hm.values.some((v) => v > 0)).toBe(true);
      expect(Array.from(hm.values), `${w0} ${w1}`).toEqual(Array.from(want));
    }
  });
});

describe("phase lanes of a large source, window by window", () => {
  it("read only the partitions a window needs and answer like the whole source, with the plan kept across a restart", async () => {
    const b = phaseRun(11);
    const cacheDir = makeTmpDir();
    dirs.push(cacheDir);
    // phaseIndexMaxRows 0: every source counts as large (a 1024-GPU day has 8 M rows)
    const large = (cache: string) => openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, cacheDir: cache, phaseIndexMaxRows: 0 });
    const first = large(cacheDir);
    const r = rng(5);
    const windows: [number | null, number | null][] = [[null, null], [T0 + 4.5 * H, T0 + 5.5 * H], [T0 + 40, T0 + 60], [NaN, T0 + H]];
    for (let i = 0; i < 10; i++) {
      const a = T0 + r() * 5.5 * H;
      windows.push([a, a + r() * 3 * H]);
    }
    const lanes = await first.laneIndex();
    const answers = async (store: MetricStore) => {
      const out: unknown[] = [];
      for (const [w0, w1] of windows)
        for (const grammar of [null, "node:10.0.0.1"]) {
          const sel = grammar ? resolveLanes(grammar, lanes) : null;
          out.push(await phasesByLane(store, w0, w1, sel));
          out.push(await phasesByLane(store, w0, w1, sel)); // asked again: no index either
        }
      return out;
    };
    const expected: unknown[] = [];
    for (const [w0, w1] of windows)
      for (const grammar of [null, "node:10.0.0.1"]) {
        const sel = grammar ? resolveLanes(grammar, lanes) : null;
        const fresh = await phasesByLane(open(b), w0, w1, sel);
        expected.push(fresh, fresh);
      }
    expect(await answers(first)).toEqual(expected);
    await flushBinaryCache();
    expect(fs.readdirSync(`${cacheDir}/derived`).some((f) => f.startsWith("phases.plan."))).toBe(true);

    // A restarted server: the kept plan picks the partitions; a late window leaves the early
    // hours unread unless they hold an OPEN marker that never closed.
    const restarted = large(cacheDir);
    await phasesByLane(restarted, T0 + 4.5 * H, T0 + 5 * H, null);
    const files = await restarted.phases.files();
    // (this run's hours 1–3 have no OPEN marker left unclosed; hours 0 and 4 do)
    expect(files.map((f) => f.block !== null)).toEqual([true, false, false, false, true, true]);
    expect(await answers(large(cacheDir))).toEqual(expected);

    // A rewritten partition is a new file set: the kept plan no longer applies.
    const heat = await heatmap(open(b), "phase", T0, T0 + 6 * H, 300, null);
    b.phases(phase("rollout", T0 + 5.2 * H, T0 + 5.3 * H, { node: "10.0.0.9", gpus: [], rank: -1, role: "rollout_manager" }));
    const after = await heatmap(open(b), "phase", T0, T0 + 6 * H, 300, null);
    expect(after.values).not.toEqual(heat.values);
    expect(await heatmap(large(cacheDir), "phase", T0, T0 + 6 * H, 300, null)).toEqual(after);
  });
});

// ---------------------------------------------------------------------------------------

/** The reference: one pass over every raw row of the metric in the window. */
async function reference(store: MetricStore, metric: string, t0: number | null, t1: number | null, perDp: boolean) {
  const blocks = await store.engine.window(t0, t1);
  const id = store.dicts.metrics.lookup(metric);
  if (id === undefined) return [];
  await Promise.all(blocks.map((b) => b.ensureRaw(id)));
  const cols = blocks.map((b) => b.metrics.get(id)).filter((c) => c !== undefined && c.rows > 0);
  return partsOf(store.dicts, cols as NonNullable<(typeof cols)[number]>[], t0, t1, perDp, ENGINE_MEAN_AGGREGATED_METRICS.has(metric));
}

const plain = (parts: { addr: string; labels: unknown; key: string; ts: Float64Array; value: Float64Array }[]) =>
  parts.map((p) => ({ addr: p.addr, labels: p.labels, key: p.key, ts: [...p.ts], value: [...p.value] }));

function engineRun(kind: "plain" | "unsorted" | "straddle" | "legacy"): RunBuilder {
  const r = rng(kind.length);
  const rows: EngineRow[] = [];
  for (let t = 0; t < 3 * H; t += 7)
    for (const addr of ["http://a:1", "http://b:1"])
      for (const metric of ["sglang_num_requests_total", "sglang_token_usage"])
        for (let dp = 0; dp < 3; dp++)
          rows.push({ ts: T0 + t + 0.25, addr, metric, labels: { dp_rank: String(dp) }, value: Math.round(r() * 1000) / 8 });
  if (kind === "unsorted") for (let i = 0; i + 40 < rows.length; i += 97) [rows[i], rows[i + 40]] = [rows[i + 40]!, rows[i]!];
  const b = run().engine(...rows);
  if (kind === "straddle") {
    // a scrape filed under the wrong hour: its ts also appears in the next partition
    const line = (v: number) => `{"ts":${T0 + H + 0.25},"addr":"http://a:1","metric":"sglang_num_requests_total","labels":{"dp_rank":"0"},"value":${v}}\n`;
    b.raw(`engine_series/${fileKey(T0)}.jsonl`, line(5));
  }
  if (kind === "legacy")
    b.legacy("engine_series", [{ ts: T0 + 20.25, addr: "http://a:1", metric: "sglang_token_usage", labels: { dp_rank: "1" }, value: 0.5 }]);
  return b;
}

function fileKey(ts: number): string {
  const d = new Date(ts * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}`;
}

describe("engine parts stitched from partitions", () => {
  for (const kind of ["plain", "unsorted", "straddle", "legacy"] as const)
    it(`match one pass over the raw rows (${kind})`, async () => {
      const b = engineRun(kind);
      const cacheDir = makeTmpDir("rlboard-cache-");
      dirs.push(cacheDir);
      // first store fills the cache; the second reads folded parts / raw columns from it
      const first = open(b, cacheDir);
      await first.engine.window(null, null);
      await flushBinaryCache();
      for (const store of [first, open(b, cacheDir), open(b)])
        for (const metric of ["sglang_num_requests_total", "sglang_token_usage", "nope"])
          for (const perDp of [false, true])
            for (const [t0, t1] of [
              [null, null],
              [T0 + 100, T0 + 2 * H + 5],
              [T0 + H + 0.25, T0 + H + 0.25],
              [T0 + 3 * H, null],
            ] as [number | null, number | null][]) {
              const got = plain(await engineParts(store, metric, t0, t1, perDp));
              const want = plain(await reference(open(b), metric, t0, t1, perDp));
              expect(got, `${metric} ${perDp} ${t0} ${t1}`).toEqual(want);
            }
    });
});

describe("cache-backed engine blocks", () => {
  it("load every metric before a closed partition grows, then append", async () => {
    const b = engineRun("plain");
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    await open(b, cacheDir).engine.window(null, null);
    await flushBinaryCache();
    const store = open(b, cacheDir);
    const before = plain(await engineParts(store, "sglang_token_usage", null, null, false));
    const [blk] = await store.engine.window(T0, T0 + 10);
    expect(blk!.source).not.toBeNull(); // served from the cache, columns not read yet
    // a late row lands in the first (closed, cached) hour
    b.raw(`engine_series/${fileKey(T0)}.jsonl`, `{"ts":${T0 + 3},"addr":"http://c:1","metric":"sglang_token_usage","labels":{},"value":0.25}\n`);
    const after = plain(await engineParts(store, "sglang_token_usage", null, null, false));
    expect(after).toEqual(plain(await reference(open(b), "sglang_token_usage", null, null, false)));
    expect(after.length).toBe(before.length + 1);
    const again = plain(await engineParts(store, "sglang_num_requests_total", null, null, true));
    expect(again).toEqual(plain(await reference(open(b), "sglang_num_requests_total", null, null, true)));
  });
});

describe("lowest_util outliers", () => {
  it("match the mean over the raw rows, for cache-loaded and freshly parsed blocks", async () => {
    const r = rng(5);
    const rows: GpuRow[] = [];
    for (let t = T0 + 10; t < T0 + 3 * H; t += 7)
      for (const node of ["10.0.0.2", "10.0.0.1"])
        for (let g = 0; g < 4; g++) if (r() < 0.9) rows.push({ ts: t + (g === 3 ? 0.5 : 0), node, gpu: g, util: Math.floor(r() * 101), mem_mb: 1, power_w: 2 });
    // a few rows filed out of time order
    for (let i = 0; i + 30 < rows.length; i += 211) [rows[i], rows[i + 30]] = [rows[i + 30]!, rows[i]!];
    const { b, cacheDir } = await gpuRunCached(rows);
    const cached = open(b, cacheDir);
    const blocks = await cached.gpuUtil.window(null, null);
    expect(blocks.some((x) => x.flatUtil() !== null)).toBe(true);
    const oracle = (t0: number | null, t1: number | null) => {
      const acc = new Map<string, { node: string; gpu: number; sum: number; n: number }>();
      for (const row of rows) {
        if ((t0 !== null && row.ts < t0) || (t1 !== null && row.ts > t1)) continue;
        const k = `${row.node}:${row.gpu}`;
        const a = acc.get(k) ?? { node: row.node, gpu: row.gpu, sum: 0, n: 0 };
        a.sum += row.util;
        a.n++;
        acc.set(k, a);
      }
      return [...acc.values()]
        .map((a) => ({ node: a.node, gpu: a.gpu, score: a.sum / a.n }))
        .sort((x, y) => x.score - y.score || (x.node < y.node ? -1 : x.node > y.node ? 1 : 0) || x.gpu - y.gpu);
    };
    for (const store of [cached, open(b)])
      for (const [t0, t1] of [
        [null, null],
        [T0 + 100, T0 + 2 * H + 5],
        [T0 + H, T0 + H + 0.5],
        // bounds on rows' stamps (a row at t0 and rows at t1 count)
        [T0 + 10 + 7 * 300 + 0.5, T0 + 10 + 7 * 500],
        [T0 + 2.5 * H, null],
        [T0 + 4 * H, T0 + 5 * H],
        // most of hour 2 (its kept totals less the rows after t1), then again from the kept totals
        [T0 + 1.5 * H, T0 + 2.9 * H],
        [T0 + 1.5 * H, T0 + 2.9 * H],
      ] as [number | null, number | null][])
        expect(await outliers(store, "lowest_util", t0, t1, 100), `${t0} ${t1}`).toEqual(oracle(t0, t1));
    // a followed run's open hour grows after its totals were kept: they are taken again
    const live = openMetricStore(b.runDir, { follow: true, statIntervalMs: 0 });
    const before = await outliers(live, "lowest_util", T0 + 2 * H, null, 100);
    expect(before).toEqual(oracle(T0 + 2 * H, null));
    const more: GpuRow[] = [];
    for (let t = T0 + 3 * H - 5; t < T0 + 3 * H; t++) more.push({ ts: t, node: "10.0.0.1", gpu: 0, util: 0, mem_mb: 1, power_w: 2 });
    b.gpu(...more);
    rows.push(...more);
    const after = await outliers(live, "lowest_util", T0 + 2 * H, null, 100);
    expect(after).toEqual(oracle(T0 + 2 * H, null));
    expect(after).not.toEqual(before);
  });
});

describe("util heatmap and fleet band from kept util peaks", () => {
  it("answer a window asked again exactly as they did the first time, row by row", async () => {
    const r = rng(11);
    const rows: GpuRow[] = [];
    for (let t = T0 + 3; t < T0 + 3 * H - 3; t += 1)
      for (const [n, node] of ["10.0.0.2", "10.0.0.1", "10.0.0.3"].entries())
        for (let g = 0; g < 4; g++) if (r() < 0.93) rows.push({ ts: t + n * 0.25, node, gpu: g, util: Math.floor(r() * 101), mem_mb: 1, power_w: 2 });
    for (let i = 0; i + 40 < rows.length; i += 997) [rows[i], rows[i + 40]] = [rows[i + 40]!, rows[i]!];
    const { b, cacheDir } = await gpuRunCached(rows);
    /** The heatmap's bytes computed from the rows themselves (rows in laneIndex order). */
    const oracle = (lanes: readonly { node: string; gpu: number }[], t0: number, t1: number, X: number) => {
      const best = new Map<string, number>();
      for (const row of rows) {
        if (row.ts < t0 || row.ts > t1) continue;
        const k = Math.min(X - 1, Math.max(0, Math.trunc(((row.ts - t0) / (t1 - t0)) * X)));
        const key = `${row.node}:${row.gpu}:${k}`;
        best.set(key, Math.max(best.get(key) ?? -1, row.util));
      }
      const out = new Uint8Array(lanes.length * X);
      lanes.forEach((l, i) => {
        for (let k = 0; k < X; k++) {
          const v = best.get(`${l.node}:${l.gpu}:${k}`);
          if (v !== undefined) out[i * X + k] = Math.min(255, Math.trunc((v / 100) * 255));
        }
      });
      return out;
    };
    for (const store of [open(b, cacheDir), open(b)]) {
      const windows: [number, number, number][] = [
        [T0, T0 + 3 * H, 600],
        [T0 + 1234.5, T0 + 1234.5 + 4000, 1200],
        [T0 + 0.5 * H, T0 + 2.75 * H, 97],
        [T0 + H - 10, T0 + H + 10, 7],
      ];
      for (const [t0, t1, X] of windows) {
        const first = await heatmap(store, "util", t0, t1, X, null);
        const firstFleet = await fleet(store, t0, t1, X);
        expect(first.values, `${t0}–${t1} X=${X}`).toEqual(oracle(first.rows as { node: string; gpu: number }[], t0, t1, X));
        for (let again = 0; again < 2; again++) {
          expect((await heatmap(store, "util", t0, t1, X, null)).values).toEqual(first.values);
          expect(await fleet(store, t0, t1, X)).toEqual(firstFleet);
        }
      }
      // the repeats above went through the kept peaks
      const blocks = await store.gpuUtil.window(null, null);
      expect(blocks.filter((x) => x.utilPeaks() !== null).length).toBeGreaterThanOrEqual(2);
    }
  });
});

describe("GPU lanes read by lane", () => {
  it("give every window and selection the rows a pass over all the rows gives", async () => {
    const r = rng(23);
    const rows: GpuRow[] = [];
    for (let t = T0 + 2; t < T0 + 3 * H - 2; t += 2)
      for (const [n, node] of ["10.0.0.3", "10.0.0.1", "10.0.0.2", "10.0.0.4"].entries())
        for (let g = 0; g < 3; g++) {
          if (r() < 0.07) continue; // a lane missing from a tick
          // nodes 1–3 tick apart (a group each), node 0 with node 1
          const row = { ts: t + Math.max(0, n - 1) * 0.125, node, gpu: g, util: Math.floor(r() * 101), mem_mb: Math.floor(r() * 80_000), power_w: Math.floor(r() * 700) };
          rows.push(row);
          if (r() < 0.01) rows.push({ ...row, util: Math.floor(r() * 101) }); // the same lane twice in one tick
        }
    // the second hour out of order in its file
    for (let i = rows.findIndex((x) => x.ts >= T0 + H); i + 50 < rows.length && rows[i]!.ts < T0 + 2 * H; i += 1499) [rows[i], rows[i + 50]] = [rows[i + 50]!, rows[i]!];
    const { b, cacheDir } = await gpuRunCached(rows);
    const windows: [number | null, number | null][] = [
      [null, null],
      [T0 + 100.5, T0 + 2 * H + 7],
      [T0 + H - 30, T0 + H + 30],
      [T0 + 2.5 * H, T0 + 9 * H],
      [T0 - H, T0 + 1],
      [T0 + 5 * H, T0 + 6 * H],
    ];
    // 12 lanes: one or two are read lane by lane (fewer than 1 row in 4), more in file order
    const selections = [null, "g:0-5", "node:10.0.0.2", "g:7,g:2,g:11", "g:4", "g:1,g:10"];
    for (const store of [open(b, cacheDir), open(b)]) {
      const blocks = await store.gpuUtil.window(null, null);
      const proto = Object.getPrototypeOf(blocks[0]!) as { laneRows: () => unknown; laneCounts: () => unknown };
      for (const [t0, t1] of windows)
        for (const s of selections)
          for (const maxPoints of [40_000, 700]) {
            const sel = s === null ? null : resolveLanes(s, await store.laneIndex());
            const byLane = await gpuSeries(store, t0, t1, maxPoints, sel);
            // without the lane order: counted per lane, read in file order
            const noOrder = vi.spyOn(proto, "laneRows").mockReturnValue(null);
            try {
              expect(byLane, `${t0}–${t1} ${s} ${maxPoints}`).toEqual(await gpuSeries(store, t0, t1, maxPoints, sel));
            } finally {
              noOrder.mockRestore();
            }
            // without either: every row of the window looked at, as for a block that still grows
            const noCounts = vi.spyOn(proto, "laneCounts").mockReturnValue(null);
            try {
              expect(byLane, `${t0}–${t1} ${s} ${maxPoints} (row by row)`).toEqual(await gpuSeries(store, t0, t1, maxPoints, sel));
            } finally {
              noCounts.mockRestore();
            }
          }
      // every hour went by lane, the shuffled one (ticks out of order) too
      expect(blocks.map((x) => x.laneRows() !== null)).toEqual([true, true, true]);
      expect(blocks.map((x) => x.laneCounts() !== null)).toEqual([true, true, true]);
      expect(blocks.map((x) => x.sorted)).toEqual([true, false, true]);
    }
    // and the rows themselves: each lane's rows of a window, stable-sorted by tick
    for (const [t0, t1] of [[null, null], [T0 + 100.5, T0 + 2 * H + 7]] as const) {
      const got = await gpuSeries(open(b, cacheDir), t0, t1, 1e9, resolveLanes("g:1,g:10", await open(b).laneIndex()));
      expect(Object.keys(got).length).toBe(2);
      for (const [key, lane] of Object.entries(got)) {
        const want = rows.filter((x) => `${x.node}:${x.gpu}` === key && (t0 === null || (x.ts >= t0 && x.ts <= t1))).sort((x, y) => x.ts - y.ts);
        expect({ ts: lane.ts, util: lane.util, mem: lane.mem_mb, power: lane.power_w }, key).toEqual({
          ts: want.map((x) => x.ts),
          util: want.map((x) => x.util),
          mem: want.map((x) => x.mem_mb),
          power: want.map((x) => x.power_w),
        });
      }
    }
  });
});

describe("GPU lanes counted per chunk", () => {
  it("bound every group range's rows of a lane from above, exactly on chunk boundaries, in ≤ 1/4 byte a row", () => {
    const r = rng(5);
    const lanes = 40;
    const gStart: number[] = [];
    const lane: number[] = [];
    for (let g = 0; g < 3000; g++) {
      gStart.push(lane.length);
      for (let l = 0; l < lanes; l++) if (r() < 0.8) lane.push(l);
      if (r() < 0.05) lane.push(Math.floor(r() * lanes)); // a lane twice in a group
    }
    const rows = lane.length;
    const x = buildLaneCounts(Uint32Array.from(gStart), Uint16Array.from(lane), rows, lanes);
    expect(x.prefix.byteLength).toBeLessThanOrEqual(rows / 4);
    expect(x.groupsPerChunk).toBeGreaterThan(1);
    const exact = (id: number, g0: number, g1: number) => {
      let n = 0;
      const end = g1 < gStart.length ? gStart[g1]! : rows;
      for (let k = g0 < gStart.length ? gStart[g0]! : rows; k < end; k++) if (lane[k] === id) n++;
      return n;
    };
    for (let i = 0; i < 300; i++) {
      const a = Math.floor(r() * 3001);
      const b = Math.floor(r() * 3001);
      const [g0, g1] = a <= b ? [a, b] : [b, a];
      const id = Math.floor(r() * (lanes + 2)); // ids past the block's lanes count 0
      const want = exact(id, g0, g1);
      const got = laneCountBound(x, id, g0, g1);
      expect(got).toBeGreaterThanOrEqual(want);
      // at most the rows of the two chunks the ends fall in
      expect(got - want).toBeLessThanOrEqual(2 * x.groupsPerChunk * 2);
      const c0 = Math.floor(g0 / x.groupsPerChunk) * x.groupsPerChunk;
      const c1 = Math.min(3000, Math.ceil(g1 / x.groupsPerChunk) * x.groupsPerChunk);
      if (g1 > g0) expect(laneCountBound(x, id, c0, c1)).toBe(exact(id, c0, c1));
    }
    expect(laneCountBound(x, 3, 0, 3000)).toBe(exact(3, 0, 3000));
    expect(laneCountBound(x, 3, 10, 10)).toBe(0);
  });

  it("keep the order of every row by lane only where a query reads a few lanes of a block", async () => {
    const rows: GpuRow[] = [];
    for (let t = T0 + 1; t < T0 + H; t += 2) for (let g = 0; g < 16; g++) rows.push({ ts: t, node: "10.0.0.1", gpu: g, util: g, mem_mb: t % 977, power_w: g });
    const { b, cacheDir } = await gpuRunCached(rows);
    const store = open(b, cacheDir);
    const perRow = async () => {
      const blocks = await store.gpuUtil.window(null, null);
      return blocks.reduce((s, x) => s + x.byteLength(), 0) / blocks.reduce((s, x) => s + x.rows, 0);
    };
    const idx = await store.laneIndex();
    // half the lanes: read in file order, counted from the chunk table — no row order
    await gpuSeries(store, null, null, 1e9, resolveLanes("g:0-7", idx));
    const half = await perRow();
    // lane, util, mem, power (9 bytes) + ticks and group starts (0.75) + the table and the
    // columns' spare room: well under the 4 bytes the order adds
    expect(half).toBeLessThan(11);
    // one lane of sixteen: its rows found through the order (4 bytes a row)
    await gpuSeries(store, null, null, 1e9, resolveLanes("g:3", idx));
    expect((await perRow()) - half).toBeGreaterThanOrEqual(4);
  });
});

describe("GPU lanes of queries that interleave", () => {
  it("answer each query as if it ran alone (the columns a query fills are its own)", async () => {
    const rows: GpuRow[] = [];
    for (let t = T0 + 1; t < T0 + 2 * H; t += 4)
      for (const node of ["10.0.0.1", "10.0.0.2"]) for (let g = 0; g < 4; g++) rows.push({ ts: t, node, gpu: g, util: (t * 7 + g * 13) % 101, mem_mb: g * 1000 + (t % 97), power_w: 100 + g });
    const { b, cacheDir } = await gpuRunCached(rows);
    const store = open(b, cacheDir);
    const idx = await store.laneIndex();
    const asks = [
      [T0, T0 + 2 * H, "node:10.0.0.1"],
      [T0 + 1000, T0 + 5000, "g:5"],
      [T0 + 10, T0 + H + 10, null],
    ] as const;
    const run1 = (a: (typeof asks)[number]) => gpuSeries(store, a[0], a[1], 300, a[2] === null ? null : resolveLanes(a[2], idx));
    const alone = [];
    for (const a of asks) alone.push(await run1(a));
    // every slice boundary yields: the three queries take turns between blocks and lanes
    let clock = 0;
    const now = vi.spyOn(performance, "now").mockImplementation(() => (clock += 50));
    try {
      expect(await Promise.all(asks.map(run1))).toEqual(alone);
    } finally {
      now.mockRestore();
    }
  });
});

describe("OPEN markers closed in another hour", () => {
  it("are those with no closed twin anywhere: random hours with shared t0s, doubled markers, closes filed early", async () => {
    for (const seed of [3, 17, 29]) {
      const r = rng(seed);
      const evs: PhaseEvent[] = [];
      for (let i = 0; i < 1500; i++) {
        const o = { node: `10.0.0.${1 + Math.floor(r() * 3)}`, gpus: [0], rank: Math.floor(r() * 6) };
        const t0 = T0 + Math.floor(r() * 4 * 60) * 60; // whole minutes: ranks and nodes share t0s, as a step's do
        const name = ["train", "rollout", "sleep"][Math.floor(r() * 3)]!;
        const kind = r();
        if (kind < 0.45) evs.push(phase(name, t0, -1, o), phase(name, t0, t0 + r() * 2 * H, o)); // closed here or hours later
        else if (kind < 0.55) evs.push(phase(name, t0, -1, o)); // still running
        else if (kind < 0.6) evs.push(phase(name, t0, -1, o), phase(name, t0, t0 - r() * 2 * H, o)); // closed "before" it opened: filed in an earlier hour
        else if (kind < 0.65) evs.push(phase(name, t0, -1, o), phase(name, t0, -1, o), phase(name, t0, t0 + H, o)); // the marker twice
        else evs.push(phase(name, t0, t0 + r() * 60, o));
      }
      if (seed === 29) evs.push(phase("train", T0 + 10, -1, { rank: 99 })); // a legacy file's row below
      const b = run().phases(...evs);
      if (seed === 29) b.legacy("phases", [phase("train", T0 + 10, T0 + 20, { rank: 99 }), phase("eval", T0 + 3 * H, -1, { rank: 98 })]);
      const source = await phaseSource(open(b), null);
      // the oracle: a marker is unmatched when no closed row anywhere has its (t0, node, rank, name)
      const closed = new Set<string>();
      const key = (x: PhaseBlock, i: number) => `${x.t0[i]}|${x.node[i]}|${x.rank[i]}|${x.name[i]}`;
      for (const x of source.blocks) for (let i = 0; i < x.n; i++) if (x.t1[i] !== -1) closed.add(key(x, i));
      const want = source.blocks.map((x) => {
        const out: number[] = [];
        for (let i = 0; i < x.n; i++) if (x.t1[i] === -1 && !closed.has(key(x, i))) out.push(i);
        return out;
      });
      expect(source.blocks.length, `seed ${seed}`).toBeGreaterThanOrEqual(4);
      expect(source.unmatched.map((s) => [...s].sort((p, q) => p - q)), `seed ${seed}`).toEqual(want);
    }
  });

  it("are matched across hours whichever hour a marker was filed in", async () => {
    const o = { node: "10.0.0.9", rank: 7 };
    // a writer that files by arrival put this marker an hour after its own; its twin,
    // filed by its close, began in the twin's own hour — not carried into it
    const late = phase("train", T0 + 1.5 * H, -1, o);
    const b = run().phases(
      phase("rollout", T0 + 0.9 * H, -1, o),
      phase("rollout", T0 + 0.9 * H, T0 + 1.1 * H, o), // carried into hour 1
      phase("train", late.t0, late.t0 + 60, o),
      phase("sleep", T0 + 2.2 * H, -1, o), // still running
      phase("eval", T0 + 3.1 * H, T0 + 3.2 * H, o),
    );
    b.raw(`phases/${partitionKey(T0 + 2.5 * H)}.jsonl`, `${pyJsonLine(late)}\n`);
    const source = await phaseSource(open(b), null);
    const left = source.blocks.flatMap((x, k) => [...source.unmatched[k]!].map((i) => `${x.str(x.name[i]!)}@${(x.t0[i]! - T0) / H}`));
    expect(left).toEqual(["sleep@2.2"]);
  });
});

describe("GPU lanes while a block grows", () => {
  it("keep every lane's rows its own when rows land between the count and the fill", async () => {
    const nodes = ["10.0.0.1", "10.0.0.2"];
    const memOf = (node: string, g: number) => (node === "10.0.0.1" ? 1000 : 2000) + g;
    const rows: GpuRow[] = [];
    for (let t = T0 + 1; t < T0 + 2 * H + 600; t += 5)
      for (const node of nodes) for (let g = 0; g < 4; g++) rows.push({ ts: t, node, gpu: g, util: (t * 3) % 101, mem_mb: memOf(node, g), power_w: 50 });
    const store = open(run().gpu(...rows));
    const blocks = await store.gpuUtil.window(null, null);
    const last = blocks[blocks.length - 1]!;
    const lanesOfTick: number[] = [];
    for (let r = last.groupStart(last.groups - 1); r < last.rows; r++) lanesOfTick.push(last.lane.chunks[r >>> 16]![r & 0xffff]!);
    const memOfId = (id: number) => memOf(store.dicts.laneNode[id]!, store.dicts.laneGpu[id]!);
    const before = last.rows;
    // Every slice boundary yields, and at each one a tick of rows lands in the newest block
    // (what another request's read of a growing hour does): the block the query counted
    // grows before it is filled.
    let clock = 0;
    let t = T0 + 2 * H + 600;
    const now = vi.spyOn(performance, "now").mockImplementation(() => {
      const st = new GpuStage();
      for (const id of lanesOfTick) st.push(t, id, 7, memOfId(id), 50);
      t += 5;
      last.appendStage(st);
      return (clock += 50);
    });
    try {
      const lanes = await gpuSeries(store, null, null, 1e9, null);
      expect(last.rows).toBeGreaterThan(before); // it grew
      expect(Object.keys(lanes).length).toBe(8);
      for (const [key, s] of Object.entries(lanes)) {
        const node = key.slice(0, key.lastIndexOf(":"));
        const g = Number(key.slice(key.lastIndexOf(":") + 1));
        expect(new Set(s.mem_mb), key).toEqual(new Set([memOf(node, g)]));
        expect(s.ts.length, key).toBeGreaterThanOrEqual(rows.length / 8);
        expect(s.ts.every((x, i) => i === 0 || x > s.ts[i - 1]!), key).toBe(true);
      }
    } finally {
      now.mockRestore();
    }
  });
});
