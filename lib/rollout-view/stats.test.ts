import { describe, expect, it } from "vitest";
import { isZeroStdGroup } from "./columns";
import { prepareStatGrid } from "./stats";
import { groups0, summary0, summaryEval0 } from "./testing/golden";

const byKey = (tiles: ReturnType<typeof prepareStatGrid>) => Object.fromEntries(tiles.map((t) => [t.key, t.value]));

describe("prepareStatGrid", () => {
  it("computes the eight tiles of a train step from the summary and groups", () => {
    const t = byKey(prepareStatGrid(summary0, groups0, false));
    const rows = summary0.rows;
    const mean = (c: string) => rows.reduce((s, r) => s + (r[c] as number), 0) / rows.length;
    expect(t.samples).toBe("8");
    expect(t.reward).toBe((mean("raw_reward") === 0 ? "0" : mean("raw_reward").toFixed(3)));
    expect(t.truncated).toBe("0");
    const zero = groups0.rows.filter((g) => g.zero_std === true).length;
    expect(t.zero_std).toBe(`${zero}/${groups0.rows.length}`);
    expect(t.lp_diff).toBe(mean("mean_abs_lp_diff").toFixed(3));
    expect(t.entropy).toBe(mean("mean_entropy").toFixed(3));
    expect(t.mixed).toBe((rows.filter((r) => r.mixed_version === true).length / rows.length).toFixed(3));
  });

  it("shows absent train-side columns and staleness as a dash on eval steps", () => {
    const t = byKey(prepareStatGrid(summaryEval0, null, true));
    expect(t.staleness).toBe("n/a");
    expect(t.lp_diff).toBe("—");
    expect(t.zero_std).toBe("—");
    expect(t.reward).not.toBe("—");
  });

  it("returns dashes, not zeros, for an empty step", () => {
    const t = byKey(prepareStatGrid({ ...summary0, rows: [] }, { ...groups0, rows: [] }, false));
    expect(t.samples).toBe("0");
    expect(t.reward).toBe("—");
    expect(t.zero_std).toBe("0/0");
  });

  it("says n/a, not an alarm, when every group has one sample (eval steps: no reward spread to measure)", () => {
    // #15 defect 10: n=1 groups have zero_std true by construction; 16/16 in red was a false alarm
    const single = { ...groups0, rows: groups0.rows.map((g) => ({ ...g, n: 1, zero_std: true })) };
    const tile = prepareStatGrid(summaryEval0, single, true).find((t) => t.key === "zero_std")!;
    expect(tile.value).toBe("n/a");
    expect(tile.alert).toBeFalsy();
    expect(tile.hint).toMatch(/one sample/);
    const staleness = prepareStatGrid(summaryEval0, single, true).find((t) => t.key === "staleness")!;
    expect(staleness.value).toBe("n/a");
    expect(staleness.hint).toMatch(/eval/);
  });

  it("counts only groups of two or more samples", () => {
    const mixed = { ...groups0, rows: [
      { group_index: 0, n: 4, zero_std: true },
      { group_index: 1, n: 4, zero_std: false },
      { group_index: 2, n: 1, zero_std: true },
    ] };
    const tile = prepareStatGrid(summary0, mixed, false).find((t) => t.key === "zero_std")!;
    expect(tile.value).toBe("1/2");
    expect(isZeroStdGroup(mixed.rows[0]!)).toBe(true);
    expect(isZeroStdGroup(mixed.rows[2]!)).toBe(false);
  });
});
