import { describe, expect, it } from "vitest";
import { describeIds, groupSiblings, noDumpNote, sampleHref, stepHref, stepPosition } from "./nav";
import { summary0 } from "./testing/golden";

describe("stepPosition", () => {
  it("finds neighbours, the newest id and the nearest existing id", () => {
    expect(stepPosition([0, 1, 2], 1)).toMatchObject({ index: 1, count: 3, prev: 0, next: 2, newest: 2, nearest: 1 });
    expect(stepPosition([0, 4, 8], 5)).toMatchObject({ index: -1, prev: 4, next: 8, nearest: 4 });
    expect(stepPosition([], 3)).toMatchObject({ index: -1, prev: null, next: null, newest: null, nearest: null });
  });
});

describe("hrefs", () => {
  it("keeps eval in the query and escapes the run id", () => {
    expect(stepHref("a b", 2, true)).toBe("/runs/a%20b/rollout/2?eval=1");
    expect(stepHref("r", 2, false, "eval=1&tab=groups")).toBe("/runs/r/rollout/2?tab=groups");
    expect(sampleHref("r", 0, 5, false)).toBe("/runs/r/rollout/0/sample/5");
  });
});

describe("groupSiblings", () => {
  it("orders the group's samples and finds prev/next", () => {
    const g = groupSiblings(summary0.rows, 1, false);
    expect(g.groupIndex).toBe(0);
    expect(g.siblings.map((s) => s.sampleIndex)).toEqual(summary0.rows.filter((r) => r.group_index === 0).map((r) => r.sample_index));
    expect(g.position).toBe(g.siblings.findIndex((s) => s.sampleIndex === 1));
    expect(g.prev).toBe(g.siblings[g.position - 1]?.sampleIndex ?? null);
  });
  it("reports an unknown sample without siblings", () => {
    expect(groupSiblings(summary0.rows, 999, false)).toMatchObject({ position: -1, siblings: [] });
  });
});

describe("describeIds / noDumpNote", () => {
  it("names the dumped steps compactly and says why a step cannot be opened", () => {
    expect(describeIds([3, 1, 2, 0])).toBe("0–3");
    expect(describeIds([5])).toBe("5");
    expect(describeIds([0, 2, 5])).toBe("0, 2, 5");
    expect(describeIds([0, 2, 4, 6, 8, 10, 12])).toBe("0, 2, 4, 6, 8, … 12");
    expect(describeIds([])).toBe("none");
    expect(noDumpNote(false, 12, [0, 1, 2])).toBe("step 12 has no rollout dump — nothing to open (dumps: steps 0–2)");
    expect(noDumpNote(true, 4, [])).toBe("eval step 4 has no rollout dump — this run has no eval rollout dumps");
  });
});
