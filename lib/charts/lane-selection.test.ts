import { describe, expect, it } from "vitest";
import {
  addTerms,
  brushToggle,
  capLanes,
  checkSelection,
  compactIndices,
  defaultSpacedSelection,
  NOTHING,
  removeTerm,
  resolveLocally,
  shownSelection,
  splitTerms,
} from "@/lib/charts/lane-selection";

const lanes = (n: number) => Array.from({ length: n }, (_, i) => ({ index: i, node: `n${Math.floor(i / 8)}`, gpu: i % 8 }));

describe("terms", () => {
  it("splits chips and treats empty / all as every lane", () => {
    expect(splitTerms(" g:0-3 , rank:1,,")).toEqual(["g:0-3", "rank:1"]);
    expect(splitTerms("all")).toEqual([]);
    expect(addTerms("g:0", "g:1, g:0")).toBe("g:0,g:1");
    expect(removeTerm("g:0,g:1,g:2", 1)).toBe("g:0,g:2");
  });
});

describe("checkSelection", () => {
  it("accepts the grammar", () => {
    for (const ok of ["all", "", "g:0-31", "rank:5", "node:10.0.0.1", "gpu:10.0.0.1:3", "engine:15000", "role:train", "every:128", "g:5-", NOTHING]) {
      expect(checkSelection(ok)).toBeNull();
    }
  });
  it("reports the server's messages for bad terms", () => {
    expect(checkSelection("bogus:1")).toBe("unknown lane selector kind 'bogus' in 'bogus:1'");
    expect(checkSelection("g:")).toBe("bad lane selector 'g:': expected kind:value");
    expect(checkSelection("every:0")).toContain("stride must be positive");
    expect(checkSelection("role:eval")).toContain("role must be train or rollout");
    expect(checkSelection("gpu:3")).toContain("expected gpu:<node>:<index>");
    expect(checkSelection("g:a-b")).toBe("invalid literal for int() with base 10: 'a'"); // the server's own message
    expect(checkSelection("g:-1")).not.toBeNull();
  });
});

describe("default and budget", () => {
  it("spaces 8 lanes evenly over more than 8", () => {
    expect(defaultSpacedSelection(lanes(64))).toBe("g:0,g:8,g:16,g:24,g:32,g:40,g:48,g:56");
    expect(defaultSpacedSelection(lanes(8))).toBeNull();
    expect(defaultSpacedSelection(lanes(12))).toBe("g:0,g:1,g:3,g:4,g:6,g:7,g:9,g:10");
  });
  it("caps at 32 in index order and says so", () => {
    const c = capLanes([...lanes(40)].reverse());
    expect(c.shown).toHaveLength(32);
    expect(c.shown[0]!.index).toBe(0);
    expect(c).toMatchObject({ total: 40, capped: true });
    expect(shownSelection(c.shown)).toBe("g:0-31");
  });
});

describe("resolveLocally", () => {
  const ls = [
    { node: "10.0.0.1", gpu: 0, index: 0 },
    { node: "10.0.0.1", gpu: 1, index: 1 },
    { node: "10.0.0.2", gpu: 0, index: 2 },
    { node: "10.0.0.2", gpu: 1, index: 3 },
  ];
  it("resolves index-only terms like the server (union, index order)", () => {
    expect(resolveLocally("", ls)).toHaveLength(4);
    expect(resolveLocally("g:3,g:0-1", ls)!.map((l) => l.index)).toEqual([0, 1, 3]);
    expect(resolveLocally("node:10.0.0.2", ls)!.map((l) => l.index)).toEqual([2, 3]);
    expect(resolveLocally("gpu:10.0.0.1:1,every:3", ls)!.map((l) => l.index)).toEqual([0, 1, 3]);
    expect(resolveLocally("g:2-", ls)!.map((l) => l.index)).toEqual([2]);
    expect(resolveLocally(NOTHING, ls)).toEqual([]);
  });
  it("defers to the server for catalog terms and malformed ones", () => {
    expect(resolveLocally("rank:0", ls)).toBeNull();
    expect(resolveLocally("role:train", ls)).toBeNull();
    expect(resolveLocally("g:-1", ls)).toBeNull();
    expect(resolveLocally("every:0", ls)).toBeNull();
    expect(resolveLocally("bogus:1", ls)).toBeNull();
  });
});

describe("brushToggle", () => {
  it("appends unselected lanes as compact ranges", () => {
    expect(brushToggle("rank:0-1", new Set([0, 1]), [4, 5, 6], [])).toBe("rank:0-1,g:4-6");
  });
  it("removes lanes when all brushed are selected, keeping ranges compact", () => {
    expect(brushToggle("g:0-7", new Set([0, 1, 2, 3, 4, 5, 6, 7]), [3], [])).toBe("g:0-2,g:4-7");
    expect(brushToggle("g:2", new Set([2]), [2], [])).toBe(NOTHING);
  });
  it("removing from 'all' selects the rest explicitly", () => {
    expect(brushToggle("", null, [1], [0, 1, 2, 3])).toBe("g:0,g:2-3");
    expect(brushToggle("", null, [], [0, 1])).toBe("");
  });
  it("compacts index lists", () => {
    expect(compactIndices([5, 1, 2, 3, 9, 10])).toEqual(["g:1-3", "g:5", "g:9-10"]);
  });
});
