import { describe, expect, test } from "vitest";
import { buildGroups, stepAggregate } from "./groups";
import { maskedF32, maxF32, meanF32, stdF32 } from "./stats";
import { baseColumns, trainColumns, type SummaryRow } from "./summary";
import type { SampleRecord, TrainRow } from "./types";
import { PER_TOKEN_FIELDS } from "./types";

function sample(over: Partial<SampleRecord> = {}): SampleRecord {
  return {
    index: 0,
    groupIndex: 0,
    prompt: "q",
    tokens: [1, 2, 3, 4, 5],
    responseLength: 3,
    reward: 1,
    lossMask: null,
    weightVersions: ["3"],
    rolloutLogProbs: null,
    removeSample: false,
    status: "completed",
    nonGenerationTime: 0,
    specAcceptTokenNum: 0,
    specDraftTokenNum: 0,
    cachedTokens: 0,
    totalPromptTokens: 0,
    ...over,
  };
}

function row(rewards: { raw: number | null; g: number | null; trunc?: boolean }): SummaryRow {
  return {
    ...baseColumns(sample({ groupIndex: rewards.g }), 3),
    ...trainColumns(sample({ status: rewards.trunc ? "truncated" : "completed" }), null),
    raw_reward: rewards.raw,
  };
}

describe("masked float32 statistics", () => {
  test("masked tokens never enter a statistic; an all-masked selection is null, not NaN", () => {
    expect(maskedF32([1, 2, 3], [0, 0, 0])).toBeNull();
    expect(maskedF32(null, [1])).toBeNull();
    const sel = maskedF32([1, 100, 3], [1, 0, 1]);
    expect(Array.from(sel ?? [])).toEqual([1, 3]);
    expect(meanF32(sel)).toBe(2);
    expect(maxF32(sel)).toBe(3);
  });

  test("std is Bessel-corrected and NaN for a single token (torch)", () => {
    expect(stdF32(Float32Array.from([1, 2, 3, 4]))).toBeCloseTo(1.2909944, 6);
    expect(stdF32(Float32Array.from([5]))).toBeNaN();
    expect(stdF32(null)).toBeNull();
  });
});

describe("summary columns", () => {
  test("versions, staleness, tool results in the prompt, rates", () => {
    const b = baseColumns(
      sample({
        weightVersions: ["1", "2", "abc"],
        prompt: [{ role: "user" }, { role: "tool" }, { role: "tool" }],
        specAcceptTokenNum: 3,
        specDraftTokenNum: 4,
        cachedTokens: 1,
        totalPromptTokens: 0,
        reward: true,
      }),
      5,
    );
    expect(b).toMatchObject({
      weight_version: "abc",
      weight_version_min: 1,
      mixed_version: true,
      staleness: 4,
      turns: 3,
      tool_calls: 2,
      spec_accept_rate: 0.75,
      prefix_cache_hit_rate: null,
      reward: 1,
    });
    const empty = baseColumns(sample({ weightVersions: [], reward: { score: 1 } }), 5);
    expect(empty).toMatchObject({ weight_version: null, weight_version_min: null, mixed_version: null, staleness: null, turns: null, tool_calls: null, reward: null });
  });

  test("lp_diff statistics use train-side tensors under the loss mask; NaN propagates", () => {
    const fields = Object.fromEntries(PER_TOKEN_FIELDS.map((f) => [f, null])) as TrainRow["fields"];
    fields.log_probs = Float32Array.from([-1, -2, -3]);
    fields.rollout_log_probs = Float32Array.from([-1.5, -2, Number.NaN]);
    const tr: TrainRow = {
      sampleIndex: 0, rank: 0, responseLength: 3, totalLength: 5, reward: 0.5, lossMask: [1, 1, 0],
      truncated: undefined, rawReward: null, fields, alignmentFailed: false,
    };
    const c = trainColumns(sample(), tr);
    expect(c.mean_abs_lp_diff).toBeCloseTo(0.25, 7);
    expect(c.max_abs_lp_diff).toBe(0.5);
    expect(c.mean_imp_ratio).toBeCloseTo((Math.exp(0.5) + 1) / 2, 6);
    expect(c.mean_entropy).toBeNull();
    tr.lossMask = [1, 1, 1];
    expect(trainColumns(sample(), tr).mean_abs_lp_diff).toBeNaN();
  });
});

describe("groups and step aggregates", () => {
  test("zero_std: a one-sample rewarded group is degenerate, an all-null group is not, NaN is not", () => {
    const groups = buildGroups(
      [
        row({ raw: 1, g: 2 }),
        row({ raw: null, g: 1 }),
        row({ raw: null, g: 1 }),
        row({ raw: 0.5, g: null }),
        row({ raw: Number.NaN, g: 3 }),
        row({ raw: 1, g: 3 }),
        row({ raw: 1, g: 4, trunc: true }),
        row({ raw: 0, g: 4 }),
      ],
      false,
    );
    expect(groups.map((g) => g.group_index)).toEqual([null, 1, 2, 3, 4]);
    expect(groups.map((g) => g.zero_std)).toEqual([true, false, true, false, false]);
    expect(groups[1]).toMatchObject({ n: 2, reward_mean: null, reward_std: null });
    expect(groups[4]).toMatchObject({ reward_mean: 0.5, truncated_frac: 0.5 });
    expect(groups[4]?.reward_std).toBeCloseTo(Math.SQRT1_2, 12);
  });

  test("eval groups aggregate the sample reward", () => {
    const rows = [row({ raw: null, g: 0 }), row({ raw: null, g: 0 })];
    expect(buildGroups(rows, true)[0]).toMatchObject({ reward_mean: 1, reward_std: 0, zero_std: true });
  });

  test("step aggregates skip nulls and keep NaN", () => {
    const rows = [row({ raw: 1, g: 0 }), row({ raw: null, g: 0 }), row({ raw: 0, g: 1 })];
    const agg = stepAggregate(7, rows, buildGroups(rows, false));
    expect(agg).toMatchObject({ rollout_id: 7, n_samples: 3, reward_mean: 0.5, zero_std_group_frac: 1, mean_entropy: null });
    expect(agg.reward_std).toBeCloseTo(Math.SQRT1_2, 12);
    const withNan = [row({ raw: Number.NaN, g: 0 })];
    expect(stepAggregate(1, withNan, buildGroups(withNan, false)).reward_mean).toBeNaN();
    expect(stepAggregate(1, [], []).reward_mean).toBeNull();
  });
});
