/**
 * The live demo writer grows every view of the qwen run (issue #15 defect 5): new engine
 * scrapes, new rollout dumps (.pt through lib/store/pt/write, mirror, sidecar, train
 * shards) readable by the dump reader, sample lifecycle events, and metrics that agree
 * with the dumps.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDumpReader } from "@/lib/store/dumps";
import { openMetricStore } from "@/lib/store/telemetry";
import { engineSeries } from "@/lib/timeline/engine";
import { metricSeries } from "@/lib/timeline/metrics";
import { startDemoLiveWriter } from "./live";
import { QWEN_ENGINES, writeQwenRun } from "./qwen";

const NOW = 1_764_400_000;
let root: string;
let dir: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-live-"));
  dir = await writeQwenRun(root, NOW, 20250812);
}, 120_000);

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const store = () => openMetricStore(dir, { follow: false });

async function enginePointsAfter(metric: string, t: number): Promise<number> {
  let n = 0;
  for (const s of await engineSeries(store(), metric, null, null, 1_000_000, true)) for (const ts of s.ts) if (ts > t) n++;
  return n;
}

describe("demo live writer", () => {
  it("scrapes the engines, writes each finished rollout's dumps and lifecycle events, and its metrics match the dumps", async () => {
    const before = await openDumpReader(dir).listRolloutIds();
    expect(before.train).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const historyEnd = (await store().timeRange())![1];
    expect(await enginePointsAfter("sglang_num_running_reqs", historyEnd)).toBe(0);

    let clock = NOW + 30;
    const live = await startDemoLiveWriter(dir, { intervalS: 3600, now: () => clock, seed: 7 });
    expect(live.firstStep).toBe(8);
    const grown: number[] = [];
    for (let i = 0; i < 25; i++) {
      clock += 2;
      await live.tick();
      grown.push(await enginePointsAfter("sglang_num_running_reqs", historyEnd));
    }
    await live.stop();

    // Engine series grow tick after tick: 2 engines × 2 dp ranks, one scrape every 2 s.
    expect(grown[0]).toBeGreaterThanOrEqual(0);
    expect(grown[grown.length - 1]!).toBeGreaterThanOrEqual(4 * 20);
    for (let i = 1; i < grown.length; i++) expect(grown[i]!).toBeGreaterThanOrEqual(grown[i - 1]!);
    const addrs = new Set((await engineSeries(store(), "sglang_gen_throughput", historyEnd, null, 100_000, true)).map((s) => s.addr));
    expect([...addrs].sort()).toEqual(QWEN_ENGINES.map((e) => e.addr).sort());
    // A busy engine somewhere: requests ran in the live rollouts.
    const running = await engineSeries(store(), "sglang_num_running_reqs", historyEnd, null, 100_000, true);
    expect(Math.max(...running.flatMap((s) => Array.from(s.value)))).toBeGreaterThan(0);

    // New rollout dumps, the one the writer reports, read back by the dump reader.
    expect(live.dumped.length).toBeGreaterThanOrEqual(2);
    expect(live.dumped[0]).toBe(8);
    const reader = openDumpReader(dir);
    const ids = await reader.listRolloutIds();
    for (const rolloutId of live.dumped) expect(ids.train).toContain(rolloutId);
    const rolloutId = live.dumped[0]!;
    for (const f of [`rollout_data/${rolloutId}.pt`, `dashboard_columns/rollout_${rolloutId}.parquet`, `trajectory/${rolloutId}.jsonl`, `train_data/${rolloutId}_0.pt`]) {
      expect(fs.existsSync(path.join(dir, f)), f).toBe(true);
    }
    const sum = await reader.summary(rolloutId, false);
    const rows = sum.rows as { sample_index: number; reward: number; response_length: number }[];
    expect(rows).toHaveLength(64);
    expect(new Set(rows.map((r) => r.sample_index)).size).toBe(64);
    expect(Math.min(...rows.map((r) => r.sample_index))).toBe((rolloutId + 1) * 1000);
    const groups = await reader.groups(rolloutId, false);
    expect(groups.rows).toHaveLength(8);

    // The step's rollout metrics are the dump's own numbers.
    const m = await metricSeries(store(), ["rollout/raw_reward"], "rollout/step", null, null);
    const at = m["rollout/raw_reward"]!.x.indexOf(rolloutId);
    expect(at).toBeGreaterThanOrEqual(0);
    const meanReward = rows.reduce((a, r) => a + Number(r.reward), 0) / rows.length;
    expect(Number(m["rollout/raw_reward"]!.y[at])).toBeCloseTo(meanReward, 5);

    // Lifecycle events of the live samples landed in the trajectories stream.
    const traj = (await store().trajectories.window(null, null)).flatMap((b) => b.rows);
    const live0 = traj.filter((e) => e.sample_index >= (rolloutId + 1) * 1000 && e.sample_index < (rolloutId + 2) * 1000);
    expect(live0.filter((e) => e.kind === "attempt_end")).toHaveLength(64);
  }, 120_000);
});
