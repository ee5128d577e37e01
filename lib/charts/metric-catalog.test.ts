import { describe, expect, it } from "vitest";
import { axisForKey, buildCategories, describeMetric, filterKeys, groupByAxis } from "@/lib/charts/metric-catalog";

describe("buildCategories", () => {
  it("orders rollout, perf, train, eval, others A–Z, sglang, dump", () => {
    const cats = buildCategories(
      ["zeta/a", "train/loss", "alpha/b", "perf/step_time", "rollout/rewards_mean", "eval/score", "rollout/log_probs"],
      ["sglang_num_running_reqs"],
    );
    expect(cats.map((c) => c.name)).toEqual(["rollout", "perf", "train", "eval", "alpha", "zeta", "sglang"]);
    expect(cats.find((c) => c.name === "train")!.keys).toEqual(["train/loss", "rollout/log_probs"]);
    expect(cats.at(-1)!.kind).toBe("engine");
  });
  it("puts dump/* last for dump-only runs and omits sglang without engine series", () => {
    expect(buildCategories(["dump/reward_mean"], []).map((c) => c.name)).toEqual(["dump"]);
    expect(buildCategories([], [])).toEqual([]);
  });
});

describe("axes and filter", () => {
  it("fetches log-probs shown under train on the rollout axis", () => {
    expect(axisForKey("rollout/log_probs")).toBe("rollout/step");
    expect(axisForKey("train/loss")).toBe("train/step");
    expect(axisForKey("eval/x")).toBe("eval/step");
    expect(axisForKey("dump/reward_mean")).toBe("rollout/step");
    expect([...groupByAxis(["train/a", "rollout/b", "train/c"]).entries()]).toEqual([
      ["train/step", ["train/a", "train/c"]],
      ["rollout/step", ["rollout/b"]],
    ]);
  });
  it("matches case-insensitively and needs every word", () => {
    expect(filterKeys(["rollout/rewards_mean", "rollout/response_length"], "REWARD mean")).toEqual(["rollout/rewards_mean"]);
    expect(filterKeys(["a", "b"], "  ")).toEqual(["a", "b"]);
  });
  it("describes titles from the most specific pattern", () => {
    expect(describeMetric("rollout/ref_log_probs")).toBe("reference/KL-anchor policy log-prob");
    expect(describeMetric("train/loss")).toBe("training loss");
    expect(describeMetric("x/unknown")).toBeNull();
  });
});
