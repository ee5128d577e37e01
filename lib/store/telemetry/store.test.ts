import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openMetricStore } from "@/lib/store/telemetry";
import { hourStartOfKey, partitionKey } from "@/lib/store/format";
import { makeTmpDir, phase, RunBuilder, type GpuRow } from "@/lib/store/telemetry/testing";
import { flushBinaryCache, whileAnswering } from "@/lib/store/telemetry/binary-cache";
import { heatmap } from "@/lib/timeline/heatmap";
import { gpuSeries } from "@/lib/timeline/gpu";

const dirs: string[] = [];
function run(): RunBuilder {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  return b;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const open = (b: RunBuilder, follow = false) => openMetricStore(b.runDir, { follow, statIntervalMs: 0 });
const gpuRow = (ts: number, gpu = 0, util = 50) => ({ ts, node: "n1", gpu, util, mem_mb: 1000, power_w: 300 });

async function gpuRows(store: ReturnType<typeof open>, t0: number | null = null, t1: number | null = null) {
  const out: number[][] = [];
  for (const b of await store.gpuUtil.window(t0, t1))
    for (let g = 0; g < b.groups; g++)
      for (let r = b.gStart.get(g); r < b.groupEnd(g); r++) out.push([b.gTs.get(g), b.util.get(r)]);
  return out;
}

describe("hour partition keys", () => {
  it("formats the UTC hour and parses it back", () => {
    expect(partitionKey(1755000000.0)).toBe("20250812_12");
    expect(partitionKey(1755003599.9)).toBe("20250812_12");
    expect(partitionKey(1755003600.0)).toBe("20250812_13");
    expect(partitionKey(1000000.0)).toBe("19700112_13");
    expect(hourStartOfKey("19700112_13")).toBe(997200);
    expect(hourStartOfKey("20250231_00")).toBeNull();
    expect(hourStartOfKey("latest")).toBeNull();
  });
});

describe("MetricStore loading", () => {
  it("treats a run without dashboard/ as an empty store", async () => {
    const dir = makeTmpDir();
    dirs.push(dir);
    const store = openMetricStore(dir, { follow: false });
    expect(store.meta()).toBeNull();
    expect(await store.timeRange()).toBeNull();
    expect(await store.metrics()).toEqual([]);
    expect(await store.laneIndex()).toEqual([]);
    expect(await store.gpuUtil.hasData()).toBe(false);
  });

  it("parses only meta and the lane catalog when opened", async () => {
    const b = run()
      .meta({ start_ts: 5 })
      .laneCatalog({ "n1:1": { roles: ["train"], ranks: [1] }, "n1:0": {} })
      .gpu(gpuRow(10));
    const store = open(b);
    expect(store.meta()?.start_ts).toBe(5);
    expect(store.gpuUtil.corruptLines()).toBe(0);
    const files = await store.gpuUtil.files();
    expect(files.every((f) => f.block === null)).toBe(true);
    expect((await store.laneIndex()).map((l) => [l.node, l.gpu, l.index])).toEqual([
      ["n1", 0, 0],
      ["n1", 1, 1],
    ]);
  });

  it("consumes only complete lines and picks up a partial last line once it is finished", async () => {
    const b = run().gpu(gpuRow(10));
    const key = partitionKey(10);
    b.raw(`gpu_util/${key}.jsonl`, '{"ts":11.0,"node":"n1","gpu":0,"ut');
    const store = open(b);
    expect(await gpuRows(store)).toEqual([[10, 50]]);
    b.raw(`gpu_util/${key}.jsonl`, 'il":70,"mem_mb":1,"power_w":2}\n');
    expect(await gpuRows(store)).toEqual([
      [10, 50],
      [11, 70],
    ]);
    expect(store.gpuUtil.corruptLines()).toBe(0);
  });

  it("accepts bare NaN and Infinity tokens", async () => {
    const b = run().metrics({ ts: 1, step_key: "train/step", step: 1, metrics: { "train/loss": NaN, "train/g": Infinity, "train/h": -Infinity } });
    const recs = await open(b).metrics();
    expect(recs[0]!.metrics["train/loss"]).toBeNaN();
    expect(recs[0]!.metrics["train/g"]).toBe(Infinity);
    expect(recs[0]!.metrics["train/h"]).toBe(-Infinity);
  });

  it("skips and counts a corrupt complete line per stream, never failing", async () => {
    const b = run().gpu(gpuRow(10));
    const key = partitionKey(10);
    b.raw(`gpu_util/${key}.jsonl`, "{not json\n");
    b.raw(`gpu_util/${key}.jsonl`, '{"ts":12.0,"node":"n1","gpu":0,"util":1,"mem_mb":1,"power_w":1,"extra":1}\n');
    b.gpu(gpuRow(13));
    b.metrics({ ts: 1, step_key: null, step: null, metrics: {} });
    b.raw("metrics.jsonl", '{"ts":2.0,"step_key":null}\n');
    const store = open(b);
    expect((await gpuRows(store)).map((r) => r[0])).toEqual([10, 13]);
    expect((await store.metrics()).length).toBe(1);
    expect(store.corruptLines()).toMatchObject({ gpu_util: 2, metrics: 1, phases: 0 });
  });

  it("reads legacy flat files and spaced JSON before the hour files", async () => {
    const b = run().gpu(gpuRow(4000));
    b.raw("gpu_util.jsonl", '{"ts": 5.0, "node": "n1", "gpu": 0, "util": 9, "mem_mb": 1, "power_w": 1}\n');
    const store = open(b);
    expect(await gpuRows(store)).toEqual([
      [5, 9],
      [4000, 50],
    ]);
    // The legacy partition spans all time: it is read for any window.
    expect((await store.gpuUtil.windowFiles(1e9, 1e9 + 10)).map((f) => f.key)).toEqual(["legacy"]);
  });

  it("reads only partitions overlapping the window", async () => {
    const b = run().gpu(gpuRow(100), gpuRow(3700), gpuRow(7300));
    const store = open(b);
    const files = await store.gpuUtil.windowFiles(3600, 7199);
    expect(files.map((f) => f.key)).toEqual([partitionKey(3700)]);
    expect(await gpuRows(store, 3600, 7199)).toEqual([[3700, 50]]);
    const all = await store.gpuUtil.files();
    expect(all.filter((f) => f.block !== null).map((f) => f.key)).toEqual([partitionKey(3700)]);
  });

  it("keeps parsed partitions within the byte budget, newest used last to go, and re-reads the evicted", async () => {
    const rows = (t: number) => Array.from({ length: 400 }, (_, i) => gpuRow(t + i));
    const b = run().gpu(...rows(100), ...rows(3700), ...rows(7300));
    const resident = async (store: ReturnType<typeof openMetricStore>) => (await store.gpuUtil.files()).filter((f) => f.block !== null).map((f) => f.key);
    const unbounded = openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });
    await gpuRows(unbounded, null, null);
    expect(await resident(unbounded)).toHaveLength(3);
    const one = (await unbounded.gpuUtil.window(null, null))[0]!.byteLength();
    // room for two partitions: reading the three hours one after the other keeps the two used last
    const store = openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, maxBytesPerStream: 2 * one + 100 });
    const all = await gpuRows(unbounded, null, null);
    expect(all).toHaveLength(1200);
    for (const h of [0, 1, 2]) expect(await gpuRows(store, h * 3600, h * 3600 + 3599)).toEqual(all.slice(h * 400, h * 400 + 400));
    expect(await resident(store)).toEqual([partitionKey(3700), partitionKey(7300)]);
    expect(await gpuRows(store, 0, 3599)).toEqual(all.slice(0, 400));
    expect(await resident(store)).toEqual([partitionKey(100), partitionKey(7300)]);
  });

  it("ignores partition files whose stem is not YYYYMMDD_HH", async () => {
    const b = run().gpu(gpuRow(100));
    b.raw("gpu_util/notes.jsonl", "garbage\n");
    const store = open(b);
    expect((await store.gpuUtil.files()).map((f) => f.key)).toEqual([partitionKey(100)]);
  });

  it("handles a partition that grows, including out-of-order lines", async () => {
    const b = run().gpu(gpuRow(20));
    const store = open(b);
    expect(await gpuRows(store)).toEqual([[20, 50]]);
    b.gpu(gpuRow(10, 0, 7), gpuRow(30, 0, 8));
    expect((await gpuRows(store)).map((r) => r[0])).toEqual([20, 10, 30]);
    const [block] = await store.gpuUtil.window(null, null);
    expect(block!.sorted).toBe(false);
  });

  it("never appends the same bytes twice under concurrent reads", async () => {
    const b = run().gpu(...Array.from({ length: 500 }, (_, i) => gpuRow(i)));
    const store = open(b);
    await store.gpuUtil.files();
    b.gpu(...Array.from({ length: 500 }, (_, i) => gpuRow(500 + i)));
    await store.gpuUtil.files(true);
    const results = await Promise.all(Array.from({ length: 8 }, () => store.gpuUtil.window(null, null)));
    for (const [blk] of results) expect(blk!.rows).toBe(1000);
  });

  it("freezes the flat streams without follow, tails them with follow", async () => {
    const b = run().metrics({ ts: 1, step_key: "rollout/step", step: 0, metrics: { a: 1 } });
    const frozen = open(b, false);
    const live = open(b, true);
    expect((await frozen.metrics()).length).toBe(1);
    expect((await live.metrics()).length).toBe(1);
    b.metrics({ ts: 2, step_key: "rollout/step", step: 1, metrics: { a: 2 } });
    expect((await frozen.metrics()).length).toBe(1);
    expect((await live.metrics()).length).toBe(2);
  });

  it("re-stats partitions at most every statIntervalMs", async () => {
    const b = run().gpu(gpuRow(10));
    const store = openMetricStore(b.runDir, { follow: true, statIntervalMs: 60_000 });
    expect((await gpuRows(store)).length).toBe(1);
    b.gpu(gpuRow(11));
    expect((await gpuRows(store)).length).toBe(1);
    await store.gpuUtil.files(true);
    expect((await gpuRows(store)).length).toBe(2);
  });

  it("keys phases by t1, OPEN markers by t0, and keeps markers out of the time range", async () => {
    const b = run().phases(phase("train", 3000, 3700), phase("train_wait", 3700, -1));
    expect(fs.readdirSync(path.join(b.dash, "phases")).sort()).toEqual([`${partitionKey(3700)}.jsonl`]);
    b.phases(phase("rollout", 100, -1));
    const store = open(b);
    expect(fs.readdirSync(path.join(b.dash, "phases")).length).toBe(2);
    // time range from edge stamps: first line of the oldest file, last line of the newest
    expect(await store.timeRange()).toEqual([100, 3700]);
  });

  it("computes the time range from flat records and partition edges", async () => {
    const b = run()
      .metrics({ ts: 50, step_key: null, step: null, metrics: {} })
      .topology({ ts: 40, engines: [] })
      .dataBuffer({ ts: 90, length: 3 })
      .gpu(gpuRow(60), gpuRow(10), gpuRow(70))
      .engine({ ts: 80, addr: "a", metric: "m", value: 1 });
    const store = open(b);
    // gpu edges are the first and the last LINE (10 is in the middle: not an edge)
    expect(await store.timeRange()).toEqual([40, 90]);
  });

  it("reports which streams are absent", async () => {
    const b = run().gpu(gpuRow(1));
    const store = open(b);
    expect(await store.gpuUtil.hasData()).toBe(true);
    expect(await store.phases.hasData()).toBe(false);
    expect(await store.engine.hasData()).toBe(false);
  });

  it("builds the lane index by scanning when there is no lane catalog", async () => {
    const b = run()
      .gpu(gpuRow(1, 2), { ts: 1, node: "n0", gpu: 5, util: 1, mem_mb: 1, power_w: 1 })
      .phases(phase("actor_train", 1, 2, { gpus: [1], rank: 4 }), phase("rollout", 1, 2, { gpus: [], role: "rollout_manager", rank: -1 }))
      .topology({ ts: 1, engines: [{ addr: "http://n1:1", worker_type: "regular", engine_rank: 0, gpus: [["n1", 2]], gpu_uuids: [null] }] });
    const lanes = await open(b).laneIndex();
    expect(lanes).toEqual([
      { node: "n0", gpu: 5, index: 0, ranks: [], engine_addrs: [], roles: [] },
      { node: "n1", gpu: 1, index: 1, ranks: [4], engine_addrs: [], roles: ["train"] },
      { node: "n1", gpu: 2, index: 2, ranks: [], engine_addrs: ["http://n1:1"], roles: ["rollout"] },
    ]);
  });

  it("memo shares one computation and retries after a failure", async () => {
    const store = open(run());
    let calls = 0;
    const fail = () => {
      calls++;
      return Promise.reject(new Error("boom"));
    };
    await expect(Promise.all([store.memo("k", "v", fail), store.memo("k", "v", fail)])).rejects.toThrow("boom");
    expect(calls).toBe(1);
    await Promise.resolve();
    expect(await store.memo("k", "v", async () => ++calls)).toBe(2);
  });
});

describe("a partition of many read chunks (#20)", () => {
  it("is parsed into columns sized once from its first chunk, closed without a copy, with every row", async () => {
    const n = 40_000; // ~3.4 MB of gpu_util JSON: two read chunks
    const rows = Array.from({ length: n }, (_, i) => ({ ts: 100 + Math.floor(i / 64), node: `n${(i >> 3) & 7}`, gpu: i & 7, util: (i * 7) % 101, mem_mb: 1000 + i, power_w: 100 + (i % 300) }));
    const evs = Array.from({ length: 40_000 }, (_, i) => phase(i % 3 ? "actor_train" : "train_wait", 100 + i * 0.01, i % 2 ? -1 : 105 + i * 0.01, { rank: i % 512, node: `n${i % 64}` }));
    const b = run().gpu(...rows).phases(...evs);
    expect(fs.statSync(path.join(b.dash, "gpu_util", `${partitionKey(100)}.jsonl`)).size).toBeGreaterThan(2 << 20);
    expect(fs.statSync(path.join(b.dash, "phases", `${partitionKey(100)}.jsonl`)).size).toBeGreaterThan(2 << 20);
    const s = open(b);
    const [g] = await s.gpuUtil.window(null, null);
    const util = g!.flatUtil()!.util;
    expect(util.length).toBe(n);
    expect(rows.filter((r, i) => util[i] !== r.util).length).toBe(0);
    // sized by the estimate (a little over the rows), kept as a view: not an exact-size copy
    expect(util.buffer.byteLength).toBeGreaterThan(n);
    expect(util.buffer.byteLength).toBeLessThanOrEqual(Math.ceil((n * 17) / 16));
    const [p] = await s.phases.window(null, null);
    expect(p!.n).toBe(evs.length);
    expect(evs.filter((e, i) => p!.t0[i] !== e.t0).length).toBe(0);
    expect(p!.t0.buffer.byteLength).toBeGreaterThan(evs.length * 8);
    expect(p!.t0.buffer.byteLength).toBeLessThanOrEqual(Math.ceil((evs.length * 8 * 17) / 16));
  });
});

describe("binary cache of closed partitions", () => {
  async function waitFor(p: string): Promise<void> {
    for (let i = 0; i < 200 && !fs.existsSync(p); i++) await new Promise((r) => setTimeout(r, 10));
  }

  /** A run of these GPU rows, its closed hours written to a fresh cache dir, and a store opener over both. */
  async function gpuRunCached(rows: readonly GpuRow[]) {
    const b = run().gpu(...rows);
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const cached = () => openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    await cached().gpuUtil.window(null, null);
    await flushBinaryCache();
    return { b, cacheDir, cached };
  }

  it("reads a cached gpu_util hour's mem and power only when a query needs them, from the cache or the JSON", async () => {
    const rows = Array.from({ length: 600 }, (_, i) => ({ ts: 100 + Math.floor(i / 4), node: `n${i % 2}`, gpu: i % 4, util: (i * 7) % 101, mem_mb: 1000 + i, power_w: 100 + (i % 300) }));
    const { b, cacheDir, cached } = await gpuRunCached(rows);
    const key = partitionKey(100);
    expect(fs.existsSync(path.join(cacheDir, "gpu_util", `${key}.bin`))).toBe(true);
    const fromJson = open(b);
    const expected = {
      util: await heatmap(fromJson, "util", 90, 300, 50, null),
      mem: await heatmap(fromJson, "mem_mb", 90, 300, 50, null),
      lanes: await gpuSeries(fromJson, 90, 300, 4000, null),
    };
    expect(Object.keys(expected.lanes)).toHaveLength(4);

    const s = cached();
    expect(await heatmap(s, "util", 90, 300, 50, null)).toEqual(expected.util);
    const [blk] = await s.gpuUtil.window(null, null);
    expect(blk!.util.length).toBe(600);
    expect(blk!.mem.length).toBe(0); // a util view left them on disk
    expect(() => blk!.flat()).toThrow(/ensureMagnitudes/);
    expect(await heatmap(s, "mem_mb", 90, 300, 50, null)).toEqual(expected.mem);
    expect(blk!.mem.length).toBe(600);
    expect(await gpuSeries(s, 90, 300, 4000, null)).toEqual(expected.lanes);

    // The cache entry went away after the block was adopted: the partition is parsed again.
    const s2 = cached();
    await heatmap(s2, "util", 90, 300, 50, null);
    fs.rmSync(path.join(cacheDir, "gpu_util", `${key}.bin`));
    expect(await gpuSeries(s2, 90, 300, 4000, null)).toEqual(expected.lanes);
  });

  it("keeps a gpu_util hour's util peaks with its util; an entry written before them still loads", async () => {
    const rows = [];
    for (let t = 0; t < 3000; t++)
      for (const node of ["n2", "n1"]) for (let g = 0; g < 4; g++) rows.push({ ts: 100 + t + (node === "n2" ? 0.5 : 0), node, gpu: g, util: (t * 13 + g * 7) % 101, mem_mb: 1000 + g, power_w: 100 + (t % 300) });
    [rows[800], rows[2000]] = [rows[2000]!, rows[800]!]; // ticks out of order
    const { b, cacheDir, cached } = await gpuRunCached(rows);
    const file = path.join(cacheDir, "gpu_util", `${partitionKey(100)}.bin`);
    const fromJson = open(b);
    const windows: [number, number, number][] = [
      [90, 3200, 50],
      [612.25, 2400, 333],
      [1000, 1010, 3],
    ];
    const expected = await Promise.all(windows.map(([t0, t1, X]) => heatmap(fromJson, "util", t0, t1, X, null)));
    const views = async (s: ReturnType<typeof cached>) => {
      for (const [i, [t0, t1, X]] of windows.entries()) expect(await heatmap(s, "util", t0, t1, X, null), `${t0}–${t1}`).toEqual(expected[i]);
    };

    // peaks from the entry, on the first ask; lane ids that differ from the writer's are mapped
    for (const otherIdsFirst of [false, true]) {
      const s = cached();
      if (otherIdsFirst) s.dicts.laneId("n0", 9);
      const [blk] = await s.gpuUtil.window(null, null);
      const peaks = blk!.utilPeaks();
      expect(peaks).not.toBeNull();
      expect(peaks!.groupsPerChunk).toBeGreaterThan(1);
      await views(s);
    }

    // the same entry without its three peak sections, as written before them
    const buf = fs.readFileSync(file);
    const hl = buf.readUInt32LE(0);
    const header = JSON.parse(buf.toString("utf8", 4, 4 + hl)) as { sections: [string, number][]; meta: Record<string, unknown> };
    expect(header.sections).toHaveLength(9);
    const size: Record<string, number> = { f64: 8, u32: 4, u16: 2, u8: 1, i32: 4, i16: 2 };
    const pad8 = (n: number) => (n + 7) & ~7;
    let at = pad8(4 + hl);
    const bytes = header.sections.map(([kind, n]) => {
      const piece = buf.subarray(at, at + pad8(n * size[kind]!));
      at += pad8(n * size[kind]!);
      return piece;
    });
    const keep = [0, 1, 2, 3, 7, 8];
    delete header.meta.peaks;
    const oldHeader = Buffer.from(JSON.stringify({ ...header, sections: keep.map((i) => header.sections[i]) }));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(oldHeader.length, 0);
    const head = Buffer.concat([len, oldHeader]);
    fs.writeFileSync(file, Buffer.concat([head, Buffer.alloc(pad8(head.length) - head.length), ...keep.map((i) => bytes[i]!)]));
    const s = cached();
    const [blk] = await s.gpuUtil.window(null, null);
    expect(blk!.mem.length).toBe(0); // adopted from the entry (mem left on disk), not parsed
    expect(blk!.utilPeaks()).toBeNull(); // built when asked again
    await views(s);
    expect(blk!.utilPeaks()).not.toBeNull();
    expect(await heatmap(s, "mem_mb", 90, 3200, 50, null)).toEqual(await heatmap(fromJson, "mem_mb", 90, 3200, 50, null));
  });

  it("cachedWindow adopts the cached closed partitions of a window and parses nothing", async () => {
    const H = 3600;
    const b = run()
      .gpu(gpuRow(10, 0, 11), gpuRow(H + 10, 0, 12), gpuRow(2 * H + 10, 0, 13), gpuRow(3 * H + 10, 0, 14));
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const store = (follow: boolean) => openMetricStore(b.runDir, { follow, cacheDir, statIntervalMs: 0 });
    // A followed run: the three older hours are closed, cached when read; the newest is open.
    await store(true).gpuUtil.window(null, null);
    await flushBinaryCache();
    fs.rmSync(path.join(cacheDir, "gpu_util", `${partitionKey(2 * H + 10)}.bin`));
    const cacheFiles = () => fs.readdirSync(path.join(cacheDir, "gpu_util")).sort();
    const before = cacheFiles();
    expect(before).toEqual([`${partitionKey(10)}.bin`, `${partitionKey(H + 10)}.bin`]);

    const s = store(true);
    const blocks = await s.gpuUtil.cachedWindow(null, null);
    // hour 0 and hour 1 from the cache; hour 2 has no entry and hour 3 is open: neither is parsed
    expect(blocks.map((x) => x.util.get(0))).toEqual([11, 12]);
    expect((await s.gpuUtil.cachedWindow(H + 5, null)).map((x) => x.util.get(0))).toEqual([12]);
    expect(await s.gpuUtil.cachedWindow(null, 5 - H)).toEqual([]);
    await flushBinaryCache();
    expect(cacheFiles()).toEqual(before); // nothing was parsed, so nothing new was cached
    // The adopted blocks are the ones queries then read; the rest is parsed by the query.
    const all = await s.gpuUtil.window(null, null);
    expect(all[0]).toBe(blocks[0]);
    expect(all[1]).toBe(blocks[1]);
    expect((await gpuRows(s)).map((r) => r[1])).toEqual([11, 12, 13, 14]);
    // A store without a cache dir has nothing to adopt.
    expect(await open(b).gpuUtil.cachedWindow(null, null)).toEqual([]);
  });

  it("keeps a result across restarts for the same file stamps only, NaN and infinities included", async () => {
    const b = run().gpu(gpuRow(10));
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const store = (follow = false) => openMetricStore(b.runDir, { follow, cacheDir, statIntervalMs: 0 });
    const value = { a: NaN, b: [Infinity, -Infinity, 1.5], c: null, d: "x" };
    let computed = 0;
    const compute = async () => (computed++, value);
    expect(await store().keptMemo("k", "v1", compute)).toEqual(value);
    await flushBinaryCache();
    const back = await store().keptMemo("k", "v1", compute);
    expect(computed).toBe(1);
    expect(back).toEqual(value);
    expect(Number.isNaN(back.a)).toBe(true);
    await store().keptMemo("k", "v2", compute); // another stamp: computed again
    expect(computed).toBe(2);
    await store(true).keptMemo("k", "v2", compute); // a followed run keeps nothing across restarts
    expect(computed).toBe(3);
  });

  it("holds its writes back while a query is being answered, and writes them once it is out", async () => {
    const b = run().gpu(gpuRow(10, 0, 11), gpuRow(10, 1, 12));
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const entry = path.join(cacheDir, "gpu_util", `${partitionKey(10)}.bin`);
    const store = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    let during = true;
    await whileAnswering(async () => {
      await store.gpuUtil.window(null, null); // parses the hour and schedules its entry
      await new Promise((r) => setTimeout(r, 600)); // past the write's 250 ms deferral
      during = fs.existsSync(entry);
    });
    expect(during).toBe(false);
    await waitFor(entry);
    expect(fs.existsSync(entry)).toBe(true);
  });

  it("lets a second store read closed partitions from the cache, and ignores stale entries", async () => {
    const b = run()
      .gpu(gpuRow(10, 0, 11), gpuRow(10, 1, 12), gpuRow(3700, 0, 13))
      .engine({ ts: 10, addr: "http://a:1", metric: "m", labels: { dp_rank: "0" }, value: 1.5 }, { ts: 3700, addr: "http://a:1", metric: "m", value: 2 })
      .phases(phase("actor_train", 5, 10), phase("train_wait", 10, -1), phase("x", 3601, 3700));
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const src = path.join(b.dash, "gpu_util", `${partitionKey(10)}.jsonl`);
    const fixed = new Date("2026-01-01T00:00:00Z");
    fs.utimesSync(src, fixed, fixed);
    // Following: only hours older than the newest are closed (and cached).
    const first = openMetricStore(b.runDir, { follow: true, cacheDir, statIntervalMs: 0 });
    await Promise.all([first.gpuUtil.window(null, null), first.engine.window(null, null), first.phases.window(null, null)]);
    const key = partitionKey(10);
    for (const s of ["gpu_util", "engine_series", "phases"]) await waitFor(path.join(cacheDir, s, `${key}.bin`));
    expect(fs.existsSync(path.join(cacheDir, "gpu_util", `${partitionKey(3700)}.bin`))).toBe(false); // newest hour: open
    // Not following: every partition is final for this process and cached too.
    await openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 }).gpuUtil.window(null, null);
    await waitFor(path.join(cacheDir, "gpu_util", `${partitionKey(3700)}.bin`));
    expect(fs.existsSync(path.join(cacheDir, "gpu_util", `${partitionKey(3700)}.bin`))).toBe(true);

    // Same size and mtime, different bytes: only a cache hit can still see util 11.
    fs.writeFileSync(src, fs.readFileSync(src, "utf8").replace('"util":11', '"util":99'));
    fs.utimesSync(src, fixed, fixed);
    const second = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    expect((await gpuRows(second)).map((r) => r[1])).toEqual([11, 12, 13]);
    const [eng] = await second.engine.window(null, 100);
    // cache-backed engine blocks read a metric's columns on first use
    expect(eng!.source).not.toBeNull();
    expect(eng!.metrics.size).toBe(0);
    await eng!.ensureRaw(second.dicts.metrics.lookup("m")!);
    const m = eng!.metrics.get(second.dicts.metrics.lookup("m")!)!;
    expect(second.dicts.seriesLabels[m.series.get(0)]).toEqual({ dp_rank: "0" });
    expect(m.value.get(0)).toBe(1.5);
    const [ph] = await second.phases.window(null, 100);
    expect(ph!.rows).toEqual([phase("actor_train", 5, 10), phase("train_wait", 10, -1)]);
    expect(ph!.open).toEqual(Uint32Array.of(1)); // the cache's own column, not a copy

    // A stale entry (size changed) is ignored.
    b.gpu(gpuRow(11, 0, 7));
    const third = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    expect((await gpuRows(third)).map((r) => r[1])).toEqual([99, 12, 7, 13]);
    await new Promise((r) => setTimeout(r, 100)); // let pending cache writes settle before cleanup
  });

  it("says whether a result is kept for a version, in memory or in the data dir", async () => {
    const b = run().gpu(gpuRow(10, 0, 11));
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const first = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    expect(await first.isKept("k", "v1")).toBe(false);
    expect(await first.keptMemo("k", "v1", async () => [1, 2])).toEqual([1, 2]);
    expect(await first.isKept("k", "v1")).toBe(true);
    expect(await first.isKept("k", "v2")).toBe(false);
    await flushBinaryCache();
    const second = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    expect(await second.isKept("k", "v1")).toBe(true);
    expect(await second.isKept("k", "v2")).toBe(false);
    // a followed run keeps nothing on disk: only what this store computed counts
    const followed = openMetricStore(b.runDir, { follow: true, cacheDir, statIntervalMs: 0 });
    expect(await followed.isKept("k", "v1")).toBe(false);
  });

  it("restores a phase hour whose strings are not the first the writing store interned", async () => {
    // The writer's ids for hour 2 are {n1, train, y, n2, rollout}, some shared with hour 1;
    // the cache maps them to local ids and a fresh store that reads hour 2 only back again.
    const hour2 = [
      phase("y", 3601, 3650, { node: "n2", role: "rollout", gpus: [3, 4], rank: 9 }),
      phase("y", 3660, -1, { node: "n2", role: "rollout", rank: 9 }),
      phase("actor_train", 3700, 3710),
      phase("y", 3660, 3690, { node: "n1", role: "rollout", rank: 9 }),
    ];
    const b = run().phases(phase("actor_train", 5, 10, { role: "r0" }), phase("x", 20, -1), ...hour2);
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const src = path.join(b.dash, "phases", `${partitionKey(3601)}.jsonl`);
    const fixed = new Date("2026-01-01T00:00:00Z");
    fs.utimesSync(src, fixed, fixed);
    const first = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    await first.phases.window(null, null);
    await flushBinaryCache();
    expect(fs.existsSync(path.join(cacheDir, "phases", `${partitionKey(3601)}.bin`))).toBe(true);
    // Same size and mtime, different bytes: what follows is read from the cache.
    fs.writeFileSync(src, fs.readFileSync(src, "utf8").replaceAll('"y"', '"z"'));
    fs.utimesSync(src, fixed, fixed);
    const second = openMetricStore(b.runDir, { follow: false, cacheDir, statIntervalMs: 0 });
    const [ph] = await second.phases.window(3600, null);
    expect(ph!.rows).toEqual(hour2);
    expect(ph!.open).toEqual(Uint32Array.of(1));
    expect(ph!.localUnmatched()).toEqual([1]);
  });
});
