/**
 * `forEachRowRun` must visit exactly the rows `forEachTickRun` visits, in the same order:
 * blocks past one column chunk (CHUNK rows), ticks in order or not, freshly parsed and
 * loaded from the binary cache, windows with bounds on tick stamps.
 */
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { hourKey } from "@/lib/store/format/partition";
import { openMetricStore, type GpuBlock } from "@/lib/store/telemetry";
import { flushBinaryCache } from "@/lib/store/telemetry/binary-cache";
import { CHUNK } from "@/lib/store/telemetry/columns";
import { forEachRowRun, forEachTickRun } from "@/lib/store/telemetry/scan";
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
      ] as [number | null, number | null][]) {
        const want = visits(blocks, t0, t1, true);
        expect(visits(blocks, t0, t1, false), `${t0} ${t1}`).toEqual(want);
      }
    // the windows above are not vacuous
    expect(visits(parsed, T0 + 2730.5, T0 + H + 2100, true).length / 2).toBe((H - 2731 + 2101) * LANES);
  });
});
