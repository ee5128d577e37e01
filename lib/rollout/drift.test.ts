import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DumpReader } from "@/lib/store/dumps";
import { driftFamily } from "@/lib/timeline/step-metrics/drift";
import { derivedMetricKeys, STEP_METRIC_FAMILIES } from "@/lib/timeline/step-metrics";
import type { MetricStore } from "@/lib/store/telemetry";
import { DRIFT_DEFAULTS, getRolloutDriftView, getStepQuantiles, selectQuantile, sortedQuantile, type DriftParams } from "./drift";
import { DRIFT_RUN } from "./drift-test-run";
import { writeDriftRun } from "./drift-test-run";

let dir: string;
let cacheDir: string;
let reader: DumpReader;

beforeAll(async () => {
  dir = await writeDriftRun();
  cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), "rlboard-drift-cache-"));
  reader = new DumpReader(dir, { cacheDir });
});

afterAll(async () => {
  await reader.close();
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rm(cacheDir, { recursive: true, force: true });
});

const params = (over: Partial<DriftParams & { eval: boolean }> = {}) => ({
  by: "position" as const,
  bins: 4,
  clip_lo: DRIFT_DEFAULTS.clip_lo,
  clip_hi: DRIFT_DEFAULTS.clip_hi,
  after_tool: 1,
  eval: false,
  ...over,
});

/** Independent reference: the loss-masked lp_diffs of a step, computed from the spec. */
function expectedDiffs(rolloutId: number): { si: number; pos: number; d: number; promptLen: number }[] {
  const out: { si: number; pos: number; d: number; promptLen: number }[] = [];
  for (const s of DRIFT_RUN[rolloutId]!) {
    s.loss_mask.forEach((m, i) => {
      if (m > 0) out.push({ si: s.spec.index, pos: i, d: Math.fround(s.log_probs[i]! - s.rollout_log_probs[i]!), promptLen: s.spec.prompt_len });
    });
  }
  return out;
}

/** numpy.quantile(a, q) with the default linear method: sort, then interpolate at (n-1)q. */
function npQuantile(values: number[], q: number): number {
  const a = [...values].sort((x, y) => x - y);
  const h = (a.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, a.length - 1);
  return a[lo]! + (h - lo) * (a[hi]! - a[lo]!);
}

describe("drift explorer over real .pt dumps", () => {
  it("overall quantiles, clip counts and the lp_diff histogram", async () => {
    const ans = await getRolloutDriftView(reader, 1, params());
    const ds = expectedDiffs(1);
    const abs = ds.map((x) => Math.abs(x.d));
    expect(ans.available).toBe(true);
    expect(ans.tokens).toBe(ds.length);
    expect(ans.samples).toBe(3);
    expect(ans.overall.p50).toBeCloseTo(npQuantile(abs, 0.5), 6);
    expect(ans.overall.p99).toBeCloseTo(npQuantile(abs, 0.99), 6);
    expect(ans.overall.max).toBe(Math.max(...abs));
    const outside = ds.filter((x) => Math.exp(x.d) < 0.8 || Math.exp(x.d) > 1.25);
    expect(ans.overall.clip_low + ans.overall.clip_high).toBe(outside.length);
    expect(ans.overall.clip_high).toBe(ds.filter((x) => Math.exp(x.d) > 1.25).length);
    expect(ans.histogram.counts.reduce((a, b) => a + b, 0)).toBe(ds.length);
    expect(ans.histogram.hi).toBe(Math.max(...abs));
    expect(ans.histogram.lo).toBe(-Math.max(...abs));
  });

  it("by position: bins cover the response, top samples name their worst token", async () => {
    const ans = await getRolloutDriftView(reader, 1, params({ bins: 3 }));
    // max response position 5 → width 2 → bins [0,2) [2,4) [4,6)
    expect(ans.bins.map((b) => [b.lo, b.hi])).toEqual([
      [0, 2],
      [2, 4],
      [4, 6],
    ]);
    const ds = expectedDiffs(1);
    for (const b of ans.bins) {
      const inBin = ds.filter((x) => x.pos >= b.lo! && x.pos < b.hi!);
      expect(b.tokens).toBe(inBin.length);
      expect(b.mean_abs).toBeCloseTo(inBin.reduce((s, x) => s + Math.abs(x.d), 0) / inBin.length, 6);
      expect(b.p99_abs).toBeCloseTo(npQuantile(inBin.map((x) => Math.abs(x.d)), 0.99), 6);
    }
    // bin [4,6): only sample 0 position 5 (|−0.75+2.75| = 2)
    const last = ans.bins[2]!;
    expect(last.top).toEqual([{ sample_index: 0, mass: 2, tokens: 1, worst_pos: 5, worst_token: 7, worst_abs: 2 }]);
    // bin [0,2): sample 0 (|−1+0.5|=0.5) ranks before sample 2 (0.125) and sample 1 (0.125)
    expect(ans.bins[0]!.top.map((t) => t.sample_index)).toEqual([0, 1, 2]);
    expect(ans.bins[0]!.top[0]).toMatchObject({ worst_pos: 1, worst_token: 3, worst_abs: 0.5 });
  });

  it("by segment: first tokens after a tool result, final answers, text", async () => {
    const ans = await getRolloutDriftView(reader, 1, params({ by: "segment", after_tool: 1 }));
    const by = Object.fromEntries(ans.bins.map((b) => [b.key, b.tokens]));
    // sample 0: turn 1 (pos 0–2) is text, pos 5 follows the tool result; sample 2: pos 2
    // follows an unmasked token (a tool result); sample 1 is one final turn.
    expect(by).toEqual({ text: 3 + 1, after_tool: 1 + 1, thinking: 0, final_answer: 4 });
    expect(ans.note).toContain("no tokenizer");
  });

  it("by version (per-turn weight versions) and by engine (from the samples' metadata)", async () => {
    const v = await getRolloutDriftView(reader, 1, params({ by: "version" }));
    expect(v.bins.map((b) => [b.key, b.tokens])).toEqual([
      ["0", 3],
      ["1", 1 + 4 + 2],
    ]);
    const e = await getRolloutDriftView(reader, 1, params({ by: "engine" }));
    expect(e.bins.map((b) => [b.key, b.tokens])).toEqual([
      ["http://10.0.0.1:15000", 4],
      ["http://10.0.0.2:15000", 4],
      ["unknown", 2],
    ]);
  });

  it("staleness: by sample and token-weighted; eval steps say so", async () => {
    const s = (await getRolloutDriftView(reader, 2, params())).staleness;
    // sample 3: version 0 at step 2 → 2 (5 tokens); sample 4: version 2 → 0 (2 tokens)
    expect(s).toMatchObject({ available: true, max: 2, mean: 1, by_sample: [1, 0, 1], by_token: [2, 0, 5] });
    expect(s.token_weighted_mean).toBeCloseTo((2 * 5 + 0 * 2) / 7, 12);
    expect(s.worst[0]).toEqual({ sample_index: 3, staleness: 2, response_length: 5 });
    await expect(getRolloutDriftView(reader, 1, params({ eval: true }))).rejects.toMatchObject({ code: "not_found" });
  });

  it("answers are cached next to the summary cache and recomputed when a dump changes", async () => {
    await getRolloutDriftView(reader, 2, params({ by: "segment" }));
    const files = await fs.readdir(cacheDir);
    expect(files.some((f) => f.startsWith("rollout_2.drift.v1.segment."))).toBe(true);
    const fresh = new DumpReader(dir, { cacheDir });
    const again = await getRolloutDriftView(fresh, 2, params({ by: "segment" }));
    expect(again.tokens).toBe(expectedDiffs(2).length);
    await fresh.close();
  });
});

describe("drift/* and staleness/* derived metrics (golden, computed independently)", () => {
  const store = { metrics: async () => [] } as unknown as MetricStore;

  it("are registered and listed for a run with train dumps", async () => {
    expect(STEP_METRIC_FAMILIES).toContain(driftFamily);
    const keys = await derivedMetricKeys({ store, dumps: reader });
    for (const k of ["drift/abs_lp_diff/p50", "drift/abs_lp_diff/p90", "drift/abs_lp_diff/p99", "drift/clip_frac", "staleness/mean", "staleness/token_weighted_mean", "staleness/max"]) {
      expect(keys).toContain(k);
    }
  });

  it("per step p50/p90/p99 of |lp_diff|, the clip fraction and staleness", async () => {
    const keys = ["drift/abs_lp_diff/p50", "drift/abs_lp_diff/p90", "drift/abs_lp_diff/p99", "drift/clip_frac", "staleness/mean", "staleness/token_weighted_mean", "staleness/max"];
    const out = await driftFamily.series({ store, dumps: reader }, keys);
    for (const rolloutId of [1, 2]) {
      const abs = expectedDiffs(rolloutId).map((x) => Math.abs(x.d));
      const i = out["drift/abs_lp_diff/p50"]!.x.indexOf(rolloutId);
      expect(i).toBeGreaterThanOrEqual(0);
      expect(out["drift/abs_lp_diff/p50"]!.y[i]).toBeCloseTo(npQuantile(abs, 0.5), 6);
      expect(out["drift/abs_lp_diff/p90"]!.y[i]).toBeCloseTo(npQuantile(abs, 0.9), 6);
      expect(out["drift/abs_lp_diff/p99"]!.y[i]).toBeCloseTo(npQuantile(abs, 0.99), 6);
      const ds = expectedDiffs(rolloutId);
      const clip = ds.filter((x) => Math.exp(x.d) < 0.8 || Math.exp(x.d) > 1.25).length / ds.length;
      expect(out["drift/clip_frac"]!.y[i]).toBeCloseTo(clip, 12);
    }
    // step 1: staleness 1 − min version per sample: [1−0, 1−1, 1−1] = [1, 0, 0]
    expect(out["staleness/mean"]).toEqual({ x: [1, 2], y: [1 / 3, 1], ts: [0, 0] });
    expect(out["staleness/max"]).toEqual({ x: [1, 2], y: [1, 2], ts: [0, 0] });
    expect(out["staleness/token_weighted_mean"]!.y[0]).toBeCloseTo(6 / 13, 12);
  });
});

describe("quantiles by selection", () => {
  it("equal the sorted array's quantiles (duplicates, ±Infinity, one value, several quantiles in turn)", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const cases: number[][] = [[3], [2, 1], [5, 5, 5, 5], [1, Infinity, 0, Infinity, -Infinity, 2]];
    for (let c = 0; c < 40; c++) cases.push(Array.from({ length: 1 + Math.floor(rnd() * 3000) }, () => (c % 3 === 0 ? Math.floor(rnd() * 5) : rnd() * 10 - 5)));
    for (const values of cases) {
      const sorted = Float32Array.from(values).sort();
      const a = Float32Array.from(values);
      let from = 0;
      for (const q of [0.5, 0.9, 0.99]) {
        const got = selectQuantile(a, a.length, q, from);
        expect(got.value).toBe(sortedQuantile(sorted, q));
        from = got.at;
      }
      // a bin's p99 on a fresh copy
      expect(selectQuantile(Float32Array.from(values), values.length, 0.99).value).toBe(sortedQuantile(sorted, 0.99));
    }
    expect(selectQuantile(new Float32Array(0), 0, 0.5).value).toBeNull();
  });
});

describe("drift from the rollout dump's rollout_log_probs (train shards without them)", () => {
  it("every breakdown and the quantiles use the fallback, as the full join does", async () => {
    const d = await writeDriftRun(undefined, { rolloutLogProbsInRolloutOnly: true });
    const r = new DumpReader(d);
    try {
      const ds = expectedDiffs(1);
      const abs = ds.map((x) => Math.abs(x.d));
      for (const by of ["position", "engine", "version", "segment"] as const) {
        const ans = await getRolloutDriftView(r, 1, params({ by }));
        expect(ans.tokens).toBe(ds.length);
        expect(ans.overall.p99).toBeCloseTo(npQuantile(abs, 0.99), 6);
      }
      const q = await getStepQuantiles(r, 1);
      expect(q.tokens).toBe(ds.length);
      expect(q.max).toBe(Math.max(...abs));
    } finally {
      await r.close();
      await fs.rm(d, { recursive: true, force: true });
    }
  });
});
