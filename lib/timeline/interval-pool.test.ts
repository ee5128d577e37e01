/**
 * IntervalPool hands its chunks to the next pool when released (fresh memory is slow on the
 * bench's VMs): a pool that reuses them must read only its own rows, never a released
 * pool's, and the answers built on pools must not depend on what an earlier query left.
 */
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CHUNK, openMetricStore, type PhaseEvent } from "@/lib/store/telemetry";
import { phase, RunBuilder } from "@/lib/store/telemetry/testing";
import { heatmap } from "@/lib/timeline/heatmap";
import { IntervalPool, phasesByLane, type PoolChunks } from "@/lib/timeline/phases";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Every row of the pool, in push order, read the way its users read it. */
function rows(pool: IntervalPool): number[][] {
  const out: number[][] = [];
  pool.forEachChunk((c, m) => {
    for (let i = 0; i < m; i++) out.push([c.slot[i]!, c.t0[i]!, c.t1[i]!, c.name[i]!, c.rank[i]!, c.role[i]!]);
  });
  return out;
}

/** The chunk sets a pool has filled, in order (what `forEachChunk` hands its readers). */
function sets(pool: IntervalPool): PoolChunks[] {
  const out: PoolChunks[] = [];
  pool.forEachChunk((c) => out.push(c));
  return out;
}

describe("IntervalPool.release", () => {
  it("empties the pool and gives its chunks to the next one, which reads only its own rows", () => {
    const a = new IntervalPool();
    const n = CHUNK + 1000; // two chunk sets
    for (let i = 0; i < n; i++) a.push(i % 7, i, i + 0.5, 3, -1, 9);
    expect(a.length).toBe(n);
    expect(rows(a)[CHUNK]).toEqual([CHUNK % 7, CHUNK, CHUNK + 0.5, 3, -1, 9]);
    const released = sets(a);
    a.release();
    expect(a.length).toBe(0);
    expect(rows(a)).toEqual([]);

    const b = new IntervalPool();
    for (let i = 0; i < 5; i++) b.push(1, 100 + i, 200 + i, 4, i, 2);
    expect(released).toContain(sets(b)[0]); // the memory of a released pool, reused
    expect(rows(b)).toEqual([0, 1, 2, 3, 4].map((i) => [1, 100 + i, 200 + i, 4, i, 2]));
    const lanes = b.split([
      { node: "x", gpu: 0 },
      { node: "y", gpu: 1 },
    ]);
    expect(lanes.map((l) => [l.node, l.gpu, l.n, [...l.t0], [...l.rank]])).toEqual([["y", 1, 5, [100, 101, 102, 103, 104], [0, 1, 2, 3, 4]]]);
  });

  it("keeps at most 20 chunk sets for the next pools", () => {
    const a = new IntervalPool();
    for (let i = 0; i < 25 * CHUNK; i++) a.push(0, i, i, 0, 0, 0);
    const old = new Set(sets(a));
    a.release();
    const b = new IntervalPool();
    for (let i = 0; i < 25 * CHUNK; i++) b.push(0, i, i, 0, 0, 0);
    expect(sets(b).filter((c) => old.has(c)).length).toBe(20);
  });
});

describe("answers built on reused pools", () => {
  it("are the same whatever a larger query released before", async () => {
    const H = 3600;
    const T0 = 1_000_000 * H;
    const evs: PhaseEvent[] = [];
    // 16 lanes × 5,000 intervals each: more than a chunk in one pass
    for (let g = 0; g < 16; g++)
      for (let i = 0; i < 5000; i++) evs.push(phase(i % 3 ? "actor_train" : "train_wait", T0 + i * 0.6, T0 + i * 0.6 + 0.5, { node: `10.0.0.${1 + (g >> 3)}`, gpus: [g & 7], rank: g }));
    const b = new RunBuilder().meta({ start_ts: T0 }).phases(...evs);
    dirs.push(b.runDir);
    const store = () => openMetricStore(b.runDir, { follow: false, statIntervalMs: 0 });
    const small = async () => ({
      lanes: await phasesByLane(store(), T0 + 100, T0 + 160, null),
      heat: await heatmap(store(), "phase", T0 + 100, T0 + 160, 50, null),
    });
    const before = await small(); // nothing released yet: fresh chunks
    expect(before.lanes.length).toBe(16 * 101);
    const big = await phasesByLane(store(), T0, T0 + 3000, null); // fills and releases > 1 chunk set
    expect(big.length).toBeGreaterThan(CHUNK);
    await heatmap(store(), "phase", T0, T0 + 3000, 300, null);
    const after = await small();
    expect(after.lanes).toEqual(before.lanes);
    expect(Array.from(after.heat.values)).toEqual(Array.from(before.heat.values));
    expect(after.heat.palette).toEqual(before.heat.palette);
  });
});
