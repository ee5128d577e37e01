import { describe, expect, it } from "vitest";
import { SGLANG_DEFAULT_WHITELIST, SGLANG_HISTOGRAMS, SGLANG_HISTORY_METRICS, SGLANG_SPEC_WHITELIST } from "./sglang-metrics";

describe("the SGLang metric list", () => {
  it("keeps the spec's 23 names in order, then current SGLang's additions", () => {
    expect(SGLANG_SPEC_WHITELIST).toHaveLength(23);
    expect(SGLANG_DEFAULT_WHITELIST.slice(0, 23)).toEqual([...SGLANG_SPEC_WHITELIST]);
    expect(new Set(SGLANG_DEFAULT_WHITELIST).size).toBe(SGLANG_DEFAULT_WHITELIST.length);
  });

  it("every _sum/_count the collector keeps belongs to a histogram family the history source reads", () => {
    const families = new Set<string>(SGLANG_HISTOGRAMS);
    const parts = SGLANG_DEFAULT_WHITELIST.filter((n) => /_(sum|count)$/.test(n));
    expect(parts).toHaveLength(12);
    for (const p of parts) expect(families.has(p.replace(/_(sum|count)$/, ""))).toBe(true);
  });

  it("the history source reads the 16 gauges/counters and 3 parts of each of the 7 histograms", () => {
    expect(SGLANG_HISTORY_METRICS).toHaveLength(16 + 7 * 3);
    expect(new Set(SGLANG_HISTORY_METRICS).size).toBe(SGLANG_HISTORY_METRICS.length);
    expect(SGLANG_HISTORY_METRICS).toContain("sglang_num_prefill_bootstrap_queue_reqs");
    expect(SGLANG_HISTORY_METRICS).toContain("sglang_kv_transfer_total_mb_bucket");
    expect(SGLANG_HISTORY_METRICS).toContain("sglang_kv_transfer_latency_ms");
    expect(SGLANG_HISTORY_METRICS).not.toContain("sglang_e2e_request_latency_seconds");
  });
});
