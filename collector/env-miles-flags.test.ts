/** miles' own flag names accepted by the collector (docs/collector.md, flag table). */
import { describe, expect, it } from "vitest";
import { ConfigError, USAGE, parseCollectorArgs } from "./env";

describe("miles flag aliases", () => {
  it("--dashboard-sglang-metrics is --sglang-metrics (empty items ignored)", () => {
    const c = parseCollectorArgs(["--dump-details", "d", "--dashboard-sglang-metrics", "sglang_num_running_reqs,,sglang_token_usage"], {});
    expect(c).toMatchObject({ help: false, sglangMetrics: ["sglang_num_running_reqs", "sglang_token_usage"] });
    expect(USAGE).toContain("--dashboard-sglang-metrics");
  });

  it("refuses both spellings at once and an empty list", () => {
    expect(() => parseCollectorArgs(["--dump-details", "d", "--sglang-metrics", "a", "--dashboard-sglang-metrics", "b"], {})).toThrow(
      new ConfigError("use either --sglang-metrics or --dashboard-sglang-metrics, not both"),
    );
    expect(() => parseCollectorArgs(["--dump-details", "d", "--dashboard-sglang-metrics", ","], {})).toThrow(/names no metric/);
  });
});
