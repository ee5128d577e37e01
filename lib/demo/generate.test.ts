import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAdvisory } from "@/lib/advisory";
import { openDumpReader as openDumps } from "@/lib/store/dumps";
import { openMetricStore, type MetricStore } from "@/lib/store/telemetry";
import { engineSeries } from "@/lib/timeline/engine";
import { metricSeries } from "@/lib/timeline/metrics";
import { outliers } from "@/lib/timeline/outliers";
import { phaseSource, phasesByLane } from "@/lib/timeline/phases";
import { trajectoryLanes } from "@/lib/timeline/trajectories";
import { demoRegenerateReason, DEMO_GENERATOR_VERSION, generateDemoRuns, STAMP_FILE } from "./generate";
import { startDemoLiveWriter } from "./live";
import { FLEET_THRESHOLD } from "@/lib/charts/lane-selection";
import { writeQwenRun } from "./qwen";

const NOW = 1_764_400_000;
let root: string;
const run = (name: string) => path.join(root, name);
const store = (name: string): MetricStore => openMetricStore(run(name), { follow: false });
/** Readers opened here are closed after the tests (open archives closed by GC warn, DEP0137). */
const readers: ReturnType<typeof openDumps>[] = [];
const openDumpReader = (dir: string) => {
  const d = openDumps(dir);
  readers.push(d);
  return d;
};

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-demo-"));
  await generateDemoRuns(root, { nowS: NOW });
}, 120_000);

afterAll(async () => {
  await Promise.all(readers.map((d) => d.close()));
  fs.rmSync(root, { recursive: true, force: true });
});

function openMarkers(src: Awaited<ReturnType<typeof phaseSource>>) {
  return src.blocks.flatMap((b, i) => [...(src.unmatched[i] ?? [])].map((j) => b.rows[j]!));
}

describe("qwen3-4b-grpo-demo", () => {
  const name = "qwen3-4b-grpo-demo";

  it("has 8 lanes, 8 logged rollout steps, a NaN loss and the phase vocabulary of a Megatron run", async () => {
    const s = store(name);
    expect((await s.laneIndex()).map((l) => `${l.node}:${l.gpu}`)).toHaveLength(8);
    const m = await metricSeries(s, ["perf/step_time", "perf/actor_train_mfu", "perf/wait_time_ratio"], "rollout/step", null, null);
    expect(m["perf/step_time"]!.x).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect((m["perf/actor_train_mfu"]!.y as number[]).every((v) => v > 0.1 && v < 0.5)).toBe(true);
    const loss = await metricSeries(s, ["train/loss"], "train/step", null, null);
    expect((loss["train/loss"]!.y as number[]).filter((v) => Number.isNaN(v))).toHaveLength(1);
    const range = (await s.timeRange())!;
    expect(range[1]).toBeLessThanOrEqual(NOW + 1);
    const phases = await phasesByLane(s, s.meta()!.start_ts, range[1], null);
    const names = new Set(phases.map((p) => p.name));
    for (const n of ["rollout", "actor_train", "train_wait", "update_weights", "data_preprocess", "log_probs", "initialize"]) expect(names).toContain(n);
    // rollout-manager phases are painted on the 4 engine GPUs
    expect(new Set(phases.filter((p) => p.name === "rollout").map((p) => p.gpu))).toEqual(new Set([4, 5, 6, 7]));
    expect(corruptFree(s)).toBe(true);
  });

  it("joins rollout and train dumps: every summary row has train-side statistics", async () => {
    const d = openDumpReader(run(name));
    const ids = await d.listRolloutIds();
    expect(ids).toEqual({ train: [0, 1, 2, 3, 4, 5, 6, 7], eval: [3] });
    const sum = await d.summary(6, false);
    expect(sum.rows).toHaveLength(64);
    for (const r of sum.rows as Record<string, unknown>[]) {
      expect(r.mean_abs_lp_diff).not.toBeNull();
      expect(r.dumped_rank).not.toBeNull();
    }
    const rows = sum.rows as { mixed_version: boolean; tool_calls: number | null; turns: number }[];
    expect(rows.some((r) => r.mixed_version)).toBe(true);
    expect(rows.some((r) => (r.tool_calls ?? 0) > 0)).toBe(true);
    const aggs = await d.stepAggregates();
    expect(aggs).toHaveLength(8);
  });

  it("decodes tokens to text, including an ~8k-token truncated sample", async () => {
    const d = openDumpReader(run(name));
    const sum = await d.summary(5, false);
    const long = (sum.rows as { sample_index: number; total_length: number; status: string }[]).find((r) => r.total_length >= 8000);
    expect(long?.status).toBe("truncated");
    const tok = await d.tokens(5, long!.sample_index, { start: 0, end: 64 });
    const text = (tok.token_text ?? []).join("");
    expect(text).toContain("<|im_start|>system\nYou are a careful assistant");
    const tail = await d.tokens(5, long!.sample_index, { start: 8000, end: 8040 });
    expect((tail.token_text ?? []).join("")).toMatch(/[a-z]{3,}/);
  });

  it("keeps multi-turn conversations with tool calls in the sidecar", async () => {
    const d = openDumpReader(run(name));
    const sum = await d.summary(2, false);
    let withCall = 0;
    let raw = 0;
    for (const r of (sum.rows as { sample_index: number }[]).slice(0, 40)) {
      const m = (await d.messages(2, r.sample_index, false)) as { messages: Record<string, unknown>[] };
      if (m.messages.some((x) => Array.isArray(x.tool_calls) && x.role === "assistant")) withCall++;
      if (m.messages.some((x) => typeof x.content === "string" && x.content.includes("<tool_call>"))) raw++;
      const call = m.messages.find((x) => Array.isArray(x.tool_calls));
      if (call) {
        const fn = (call.tool_calls as { function: { name: string; arguments: string } }[])[0]!.function;
        expect(() => JSON.parse(fn.arguments) as unknown).not.toThrow();
        expect(m.messages.some((x) => x.role === "tool")).toBe(true);
      }
    }
    expect(withCall).toBeGreaterThan(10);
    expect(raw).toBeGreaterThan(0);
  });

  it("replays sample lifecycles (turns, tool spans, an aborted-then-resumed attempt)", async () => {
    const s = store(name);
    const lanes = await trajectoryLanes(s, null, null);
    expect(lanes.length).toBeGreaterThan(500);
    expect(lanes.some((l) => l.segments.some((g) => g.kind === "tool"))).toBe(true);
    expect(lanes.some((l) => l.attempts.length === 2 && l.versions.length === 2)).toBe(true);
  });

  it("is deterministic for a seed and a clock", async () => {
    const a = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-demo-a-"));
    try {
      await writeQwenRun(a, NOW, 20250812);
      for (const rel of ["dashboard/metrics.jsonl", "rollout_data/3.pt", "train_data/3_1.pt", "trajectory/3.jsonl"]) {
        expect(hash(path.join(a, name, rel)), rel).toBe(hash(path.join(run(name), rel)));
      }
    } finally {
      fs.rmSync(a, { recursive: true, force: true });
    }
  });
});

describe("llama-70b-gspo-64gpu", () => {
  const name = "llama-70b-gspo-64gpu";

  it("has 64 lanes, ~1 h of 1 Hz samples and no dumps", async () => {
    const s = store(name);
    expect(await s.laneIndex()).toHaveLength(64);
    const [t0, t1] = (await s.timeRange())!;
    expect(t1 - t0).toBeGreaterThan(3500);
    expect((await openDumpReader(run(name)).listRolloutIds()).train).toEqual([]);
  });

  it("gives the advisory a stall and an abort storm, and the outliers a straggler", async () => {
    const s = store(name);
    const [t0, t1] = (await s.timeRange())!;
    const adv = await getAdvisory({ store: s, dumps: openDumpReader(run(name)), settings: { lowMfuThreshold: 0.15 } }, { t0: t1 - 14400, t1 });
    const critical = adv.advisories.filter((a) => a.level === "critical").map((a) => a.message);
    expect(critical.some((m) => m.includes("'rollout'") && m.includes("stalled"))).toBe(true);
    expect(critical.some((m) => m.includes("'train_wait'") && m.includes("64 rank(s)"))).toBe(true);
    expect(adv.advisories.some((a) => a.level === "warning" && a.message.includes("aborted"))).toBe(true);
    const low = await outliers(s, "lowest_util", t0, t1, 3);
    expect(low[0]).toMatchObject({ node: "10.1.0.3", gpu: 5 });
    const slow = await outliers(s, "slowest_phase:actor_train", t0, t1, 3);
    expect(slow[0]).toMatchObject({ node: "10.1.0.3", gpu: 5 });
  });
});

describe("offline-dumps-only", () => {
  const name = "offline-dumps-only";

  it("has dumps but no dashboard; aggregates and tokens still work", async () => {
    expect(fs.existsSync(path.join(run(name), "dashboard"))).toBe(false);
    expect(await store(name).timeRange()).toBeNull();
    const d = openDumpReader(run(name));
    expect((await d.listRolloutIds()).train).toEqual([0, 1, 2, 3]);
    expect(await d.stepAggregates()).toHaveLength(4);
    const sum = await d.summary(0, false);
    const si = (sum.rows[0] as { sample_index: number }).sample_index;
    const tok = await d.tokens(0, si, { start: 0, end: 12 });
    expect((tok.token_text ?? []).join("")).toContain("<|im_start|>user\nA ");
  });

  it("raises the rollout advisories from the dumps alone: zero-std groups and truncation in its last step (#16 part 5)", async () => {
    const adv = await getAdvisory({ store: store(name), dumps: openDumpReader(run(name)), settings: { lowMfuThreshold: 0.15 } }, {});
    const warnings = adv.advisories.filter((a) => a.level === "warning").map((a) => a.message);
    expect(warnings).toContain("2/4 groups in rollout 3 have zero reward std: they contribute zero policy gradient.");
    expect(warnings.some((m) => m.startsWith("5") && m.includes("of samples in rollout 3 are truncated"))).toBe(true);
    expect(adv.mfu).toBeNull();
  });
});

describe("llama-70b-gspo-128gpu", () => {
  it("has more lanes than the per-lane view draws, so the Compute Utilization view opens on the fleet overview (#15 defect 5)", async () => {
    const s = store("llama-70b-gspo-128gpu");
    const lanes = await s.laneIndex();
    expect(lanes.length).toBe(128);
    expect(lanes.length).toBeGreaterThan(FLEET_THRESHOLD);
    expect(new Set(lanes.map((l) => l.node)).size).toBe(16);
    expect(await s.engine.hasData()).toBe(true);
    const range = (await s.timeRange())!;
    expect(range[1] - range[0]).toBeGreaterThan(15 * 60);
    expect(range[1]).toBeLessThan(NOW - 15 * 60);
    // it ran to its end: num_rollout is the end marker run_status reads (finished, not killed)
    const last = Math.max(...(await s.metrics()).filter((r) => r.step_key === "rollout/step").map((r) => r.step ?? -1));
    expect(last).toBeGreaterThanOrEqual(2);
    expect(s.meta()!.args).toMatchObject({ num_rollout: last + 1 });
  });
});

describe("stamp and live writer", () => {
  it("stamps the generator version; a changed version, a missing run or an old stamp ask for regeneration", () => {
    const stamp = JSON.parse(fs.readFileSync(path.join(root, STAMP_FILE), "utf8")) as { version: number };
    expect(stamp.version).toBe(DEMO_GENERATOR_VERSION);
    expect(demoRegenerateReason(root, NOW + 60)).toBeNull();
    expect(demoRegenerateReason(root, NOW + 7 * 3600)).toBe("stale");
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "rlboard-stamp-"));
    try {
      expect(demoRegenerateReason(other, NOW)).toBe("missing");
      fs.writeFileSync(path.join(other, STAMP_FILE), JSON.stringify({ ...stamp, version: -1, generated_at: NOW }));
      expect(demoRegenerateReason(other, NOW)).toBe("version");
      fs.writeFileSync(path.join(other, STAMP_FILE), JSON.stringify({ ...stamp, generated_at: NOW }));
      expect(demoRegenerateReason(other, NOW)).toBe("incomplete");
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it("appends live steps after the history, with an OPEN rollout marker that closes, continuous counters and nothing dangling after stop", async () => {
    const dir = run("qwen3-4b-grpo-demo");
    let clock = NOW + 30;
    const live = await startDemoLiveWriter(dir, { intervalS: 3600, now: () => clock, seed: 1 });
    expect(live.firstStep).toBe(8);
    const sawOpen: string[] = [];
    for (let i = 0; i < 30; i++) {
      clock += 2;
      await live.tick();
      const s = store("qwen3-4b-grpo-demo");
      for (const ev of openMarkers(await phaseSource(s, null))) if (ev.t0 > NOW + 30) sawOpen.push(ev.name);
    }
    await live.stop();
    expect(sawOpen).toContain("rollout");
    const s = store("qwen3-4b-grpo-demo");
    const m = await metricSeries(s, ["perf/step_time"], "rollout/step", null, null);
    expect(m["perf/step_time"]!.x.slice(8, 10)).toEqual([8, 9]);
    expect(openMarkers(await phaseSource(s, null))).toEqual([]);
    for (const series of await engineSeries(s, "sglang_generation_tokens_total", null, null, 100_000, true)) {
      const v = Array.from(series.value);
      for (let i = 1; i < v.length; i++) expect(v[i]!).toBeGreaterThanOrEqual(v[i - 1]!);
    }
  });
});

function hash(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

function corruptFree(s: MetricStore): boolean {
  return Object.values(s.corruptLines()).every((n) => n === 0);
}
