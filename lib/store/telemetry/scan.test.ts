/**
 * `forEachRowRun` must visit exactly the rows `forEachTickRun` visits, in the same order:
 * blocks past one column chunk (CHUNK rows), ticks in order or not, freshly parsed and
 * loaded from the binary cache, windows with bounds on tick stamps. `maxUtilByBucket` must
 * give the row-by-row maxima whether or not a block's util peaks answer part of a window.
 */
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { hourKey } from "@/lib/store/format/partition";
import { openMetricStore } from "@/lib/store/telemetry";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { CHUNK } from "@/lib/store/telemetry/columns";
import { GpuBlock } from "@/lib/store/telemetry/blocks";
import { forEachRowRun, forEachTickRun, maxUtilByBucket } from "@/lib/store/telemetry/scan";
import { makeTmpDir, pyJsonLine, RunBuilder } from "@/lib/store/telemetry/testing";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const H = 3600;
const T0 = 500_000 * H; // an hour boundary
const LANES = 24;

/** Hour 0: ticks in order (86 400 rows, two chunks); hour 1: the same with two ticks swapped. */
function twoHours(): RunBuilder {
  const b = new RunBuilder();
  dirs.push(b.runDir);
  for (const hour of [0, 1]) {
    const ticks = Array.from({ length: H }, (_, i) => T0 + hour * H + i);
    if (hour === 1) [ticks[100], ticks[2000]] = [ticks[2000]!, ticks[100]!];
    const lines: string[] = [];
    for (const ts of ticks)
      for (let l = 0; l < LANES; l++)
        lines.push(pyJsonLine({ ts, node: `10.0.0.${1 + (l >> 3)}`, gpu: l & 7, util: (ts + l) % 101, mem_mb: 1, power_w: 2 }));
    b.raw(`gpu_util/${hourKey(T0 + hour * H)}.jsonl`, `${lines.join("\n")}\n`);
  }
  return b;
}

/** Visited rows as (block, row) pairs packed in one array. */
function visits(blocks: readonly GpuBlock[], t0: number | null, t1: number | null, byTick: boolean): number[] {
  const out: number[] = [];
  const at = (b: GpuBlock) => blocks.indexOf(b);
  if (byTick)
    forEachTickRun(blocks, t0, t1, (b, _ts, c, from, to) => {
      for (let o = from; o < to; o++) out.push(at(b), c * CHUNK + o);
    });
  else
    forEachRowRun(blocks, t0, t1, (b, c, from, to) => {
      for (let o = from; o < to; o++) out.push(at(b), c * CHUNK + o);
    });
  return out;
}

describe("forEachRowRun", () => {
  it("visits the rows forEachTickRun visits, in the same order", async () => {
    const b = twoHours();
    const cacheDir = makeTmpDir("rlboard-cache-");
    dirs.push(cacheDir);
    const fresh = openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, cacheDir });
    const parsed = await fresh.gpuUtil.window(null, null);
    await flushBinaryCache();
    const loaded = await openMetricStore(b.runDir, { follow: false, statIntervalMs: 0, cacheDir }).gpuUtil.window(null, null);
    expect(parsed.map((x) => [x.rows, x.sorted])).toEqual([
      [H * LANES, true],
      [H * LANES, false],
    ]);
    expect(H * LANES).toBeGreaterThan(CHUNK);
    for (const blocks of [parsed, loaded])
      for (const [t0, t1] of [
        [null, null],
        [T0 + 5, T0 + 5], // one tick
        [T0 + 2730.5, T0 + H + 2100], // across the chunk edge of hour 0 and the swapped ticks of hour 1
        [T0 + H + 99, T0 + H + 101],
        [T0 + H - 1, null],
        [null, T0 - 1], // before every row
        [T0 + 10, T0 + 9], // empty
        [T0 + H, T0 + 2 * H - 1], // all of hour 1 (ticks out of order): the whole block
        [T0 + H + 1, T0 + 2 * H - 1], // hour 1 less its first tick
      ] as [number | null, number | null][]) {
        const want = visits(blocks, t0, t1, true);
        expect(visits(blocks, t0, t1, false), `${t0} ${t1}`).toEqual(want);
      }
    // the windows above are not vacuous
    expect(visits(parsed, T0 + 2730.5, T0 + H + 2100, true).length / 2).toBe((H - 2731 + 2101) * LANES);
  });

  it("visits a block of interleaved ticks in one call per run and column chunk, not per tick", async () => {
    // two nodes whose samplers tick 0.4 s apart, their lines interleaved: ticks go back and forth
    const b = new RunBuilder();
    dirs.push(b.runDir);
    const lines: string[] = [];
    for (let i = 0; i < H; i++)
      for (const [node, dt] of [["10.0.0.1", 0.5], ["10.0.0.2", 0.1]] as const)
        for (let gpu = 0; gpu < 8; gpu++) lines.push(pyJsonLine({ ts: T0 + i + dt, node, gpu, util: (i + gpu) % 101, mem_mb: 1, power_w: 2 }));
    b.raw(`gpu_util/${hourKey(T0)}.jsonl`, `${lines.join("\n")}\n`);
    const blocks = await openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 }).gpuUtil.window(null, null);
    expect(blocks.map((x) => [x.rows, x.groups, x.sorted])).toEqual([[H * 16, H * 2, false]]);
    const calls = (t0: number | null, t1: number | null) => {
      let n = 0;
      forEachRowRun(blocks, t0, t1, () => n++);
      return n;
    };
    for (const [t0, t1, most] of [
      [null, null, 1], // the whole block
      [T0 + 0.3, T0 + H, 2], // all but node 2's first tick, the block's second: two runs
      [T0 + 1.05, T0 + 100.05, 1], // both nodes' ticks 1–99: one run
      [T0 + 100.2, T0 + 100.4], // no row
    ] as [number | null, number | null, number?][]) {
      expect(visits(blocks, t0, t1, false), `${t0} ${t1}`).toEqual(visits(blocks, t0, t1, true));
      expect(calls(t0, t1), `${t0} ${t1}`).toBe(most ?? (visits(blocks, t0, t1, true).length ? 1 : 0));
    }
    expect(visits(blocks, T0 + 1.05, T0 + 100.05, false).length / 2).toBe(2 * 99 * 8);
  });
});

describe("maxUtilByBucket", () => {
  function rng(seed: number) {
    let s = seed;
    return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  }

  /**
   * A flat block of `groups` tick groups of 1–6 rows (lane ids 0–9, util 0–255), ticks
   * mostly rising with repeats and backward steps (an unsorted block), and optionally one
   * NaN tick (whose rows no window holds).
   */
  function flatBlock(seed: number, groups: number, nonFinite: number | null): { block: GpuBlock; rows: { ts: number; lane: number; util: number }[] } {
    const r = rng(seed);
    const gTs = new Float64Array(groups);
    const gStart = new Uint32Array(groups);
    const lanes: number[] = [];
    const utils: number[] = [];
    const rows: { ts: number; lane: number; util: number }[] = [];
    let t = T0;
    for (let g = 0; g < groups; g++) {
      t += r() < 0.1 ? -3 : r() < 0.2 ? 0.5 : 1;
      const ts = g === nonFinite ? NaN : t;
      gTs[g] = ts;
      gStart[g] = lanes.length;
      const n = 1 + Math.floor(r() * 6);
      for (let i = 0; i < n; i++) {
        const lane = Math.floor(r() * 10);
        const util = r() < 0.05 ? 255 : Math.floor(r() * 101);
        lanes.push(lane);
        utils.push(util);
        rows.push({ ts, lane, util });
      }
    }
    const finite = rows.map((x) => x.ts).filter(Number.isFinite);
    const block = GpuBlock.restore(
      { gTs, gStart, lane: Uint16Array.from(lanes), util: Uint8Array.from(utils), mem: new Int32Array(lanes.length), power: new Int16Array(lanes.length) },
      false,
      [...new Set(lanes)],
      Math.min(...finite),
      Math.max(...finite),
    );
    return { block, rows };
  }

  /** The views' bucket of ts in [t0, t1] split into X (lib/timeline/heatmap.ts). */
  const bucketOf = (t0: number, t1: number, X: number) => (ts: number) => Math.min(X - 1, Math.max(0, Math.trunc(((ts - t0) / (t1 - t0)) * X)));

  /** Row by row, as the definition reads. */
  function oracle(rows: readonly { ts: number; lane: number; util: number }[], t0: number, t1: number, X: number, L: number): Int16Array {
    const m = new Int16Array(X * L).fill(-1);
    for (const { ts, lane, util } of rows) {
      if (!(ts >= t0 && ts <= t1)) continue;
      const at = bucketOf(t0, t1, X)(ts) * L + lane;
      if (util > m[at]!) m[at] = util;
    }
    return m;
  }

  it("reads kept util peaks where a chunk lies in one bucket and gives the row-by-row maxima for any window", () => {
    for (const [seed, groups, nonFinite] of [
      [1, 5000, null],
      [2, 3000, 1234],
      [3, 7, null],
    ] as const) {
      const { block, rows } = flatBlock(seed, groups, nonFinite);
      expect(block.utilPeaks()).toBeNull(); // the first ask is answered row by row
      const peaks = block.utilPeaks();
      if (groups > 100) {
        expect(peaks).not.toBeNull();
        expect(peaks!.groupsPerChunk).toBeGreaterThan(1);
        if (nonFinite !== null) expect(peaks!.lo[Math.floor(nonFinite / peaks!.groupsPerChunk)]).toBeNaN();
      }
      const r = rng(seed * 7);
      const lo = Math.min(...rows.map((x) => x.ts));
      const hi = Math.max(...rows.filter((x) => Number.isFinite(x.ts)).map((x) => x.ts));
      let viaPeaks = 0;
      for (let i = 0; i < 60; i++) {
        const a = lo - 5 + r() * (hi - lo + 10);
        const b = i % 10 === 0 ? hi : a + 0.5 + r() * (hi - a + 5);
        const X = [1, 3, 17, 40, 600][i % 5]!;
        const got = new Int16Array(X * 10).fill(-1);
        maxUtilByBucket(block, a, b, bucketOf(a, b, X), got, 10);
        expect(got, `window ${a}–${b}, X=${X}`).toEqual(oracle(rows, a, b, X, 10));
        if (peaks) {
          // the same window without peaks (a fresh block) agrees too, so the comparison above covered the peaks
          const fresh = flatBlock(seed, groups, nonFinite).block;
          const raw = new Int16Array(X * 10).fill(-1);
          maxUtilByBucket(fresh, a, b, bucketOf(a, b, X), raw, 10);
          expect(raw).toEqual(got);
          viaPeaks++;
        }
      }
      if (groups > 100) expect(viaPeaks).toBe(60);
    }
  });
});
