import { describe, expect, it } from "vitest";
import { numericColumns, prepareScatter } from "./scatter";
import { summary0 } from "./testing/golden";

describe("prepareScatter", () => {
  it("plots reward against response length with true values in the tooltip", () => {
    const s = prepareScatter(summary0.rows, { x: "response_length", y: "raw_reward", jitter: false });
    expect(s.ids.length).toBe(summary0.rows.length);
    expect(Array.from(s.model.series[0]!.x)).toEqual(summary0.rows.map((r) => r.response_length));
    expect(s.model.tooltip!(0)).toContain("sample 0");
    expect(s.model.tooltip!(0)).toContain("raw_reward=0");
  });
  it("jitters binary rewards deterministically but keeps them near their value", () => {
    const a = prepareScatter(summary0.rows, { x: "response_length", y: "raw_reward" });
    const b = prepareScatter(summary0.rows, { x: "response_length", y: "raw_reward" });
    expect(a.jittered).toBe(true);
    expect(Array.from(a.model.series[0]!.y)).toEqual(Array.from(b.model.series[0]!.y));
    a.model.series[0]!.y.forEach((v, i) => expect(Math.abs(v - (summary0.rows[i]!.raw_reward as number))).toBeLessThan(0.05));
  });
  it("flags truncated samples and skips rows without a value", () => {
    const rows = [
      { ...summary0.rows[0]!, truncated: true },
      { ...summary0.rows[1]!, raw_reward: null },
    ];
    const s = prepareScatter(rows, { x: "response_length", y: "raw_reward" });
    expect(Array.from(s.model.series[0]!.flag!)).toEqual([1]);
    expect(s.skipped).toBe(1);
  });
  it("offers numeric columns as axes", () => {
    const cols = numericColumns(summary0.columns, summary0.rows);
    expect(cols).toContain("response_length");
    expect(cols).not.toContain("status");
    expect(cols).not.toContain("spec_accept_rate");
  });
});
