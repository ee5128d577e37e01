import { describe, expect, it } from "vitest";
import {
  addTerms,
  brushToggle,
  pageAhead,
  pageFor,
  PAGE_STEP,
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
  it("pages 32 rows, following the rows in sight", () => {
    expect(pageFor({ first: 0, count: 12 }, 40)).toEqual({ start: 0, size: 32 });
    expect(shownSelection(lanes(40).slice(0, 32))).toBe("g:0-31");
    // scrolled to the bottom: the page ends at the last lane
    expect(pageFor({ first: 30, count: 12 }, 40)).toEqual({ start: 8, size: 32 });
    // fewer lanes than a page: all of them
    expect(pageFor({ first: 3, count: 12 }, 5)).toEqual({ start: 0, size: 5 });
    expect(pageFor({ first: 0, count: 12 }, 0)).toEqual({ start: 0, size: 0 });
  });
  it("moves the page in steps of 8 rows and keeps the rows in sight inside it", () => {
    for (let first = 0; first < 500; first++) {
      const p = pageFor({ first, count: 14 }, 512);
      expect(p.start % PAGE_STEP === 0 || p.start === 512 - p.size).toBe(true);
      expect(p.start).toBeLessThanOrEqual(first);
      expect(p.start + p.size).toBeGreaterThanOrEqual(Math.min(512, first + 14));
    }
    // one or two rows of scrolling ask nothing new
    expect(pageFor({ first: 9, count: 14 }, 512)).toEqual(pageFor({ first: 10, count: 14 }, 512));
    // a tall window gets a bigger page, still covering every row in sight
    const tall = pageFor({ first: 100, count: 40 }, 512);
    expect(tall.size).toBe(56);
    expect(tall.start + tall.size).toBeGreaterThanOrEqual(140);
  });
  it("keeps the page while the rows in sight stay in it, and moves it ahead of the scroll", () => {
    const top = pageFor({ first: 0, count: 14 }, 512);
    // scrolling down inside [0, 32): the same page (same object: nothing re-asked)
    for (let first = 0; first + 14 <= 32; first++) expect(pageFor({ first, count: 14 }, 512, top)).toBe(top);
    // the rows in sight step out: the next page puts them near its top
    const down = pageFor({ first: 19, count: 14 }, 512, top);
    expect(down).toEqual({ start: 8, size: 32 });
    const far = pageFor({ first: 200, count: 14 }, 512, down);
    expect(far).toEqual({ start: 192, size: 32 });
    // scrolling back up out of it: the rows in sight near the bottom of the new page
    const up = pageFor({ first: 191, count: 14 }, 512, far);
    expect(up.start).toBeLessThanOrEqual(191);
    expect(up.start + up.size).toBeGreaterThanOrEqual(205);
    // with PAGE_STEP / 2 to PAGE_STEP * 1.5 rows of room below them, as going down above
    expect(up.start + up.size - 205).toBeGreaterThanOrEqual(PAGE_STEP / 2);
    expect(up.start + up.size - 205).toBeLessThan(PAGE_STEP * 1.5);
    expect(down.start).toBeLessThanOrEqual(19 - PAGE_STEP / 2);
    // a selection that shrank under the page: clamped, still covering the rows in sight
    expect(pageFor({ first: 30, count: 14 }, 40, far)).toEqual({ start: 8, size: 32 });
    // at the bottom the page ends at the last lane and stays
    const bottom = pageFor({ first: 505, count: 14 }, 512, far);
    expect(bottom).toEqual({ start: 480, size: 32 });
    expect(pageFor({ first: 500, count: 14 }, 512, bottom)).toBe(bottom);
  });
  it("names the page a scroll on in the same direction reaches next, once the rows in sight near its edge", () => {
    const page = { start: 64, size: 32 };
    // in the middle of the page: nothing asked ahead
    expect(pageAhead(page, { first: 72, count: 14 }, 512, true)).toBeNull();
    expect(pageAhead(page, { first: 74, count: 14 }, 512, false)).toBeNull();
    // within PAGE_STEP rows of the bottom edge, going down
    const down = pageAhead(page, { first: 96 - 14 - PAGE_STEP, count: 14 }, 512, true)!;
    // exactly the page pageFor gives when the rows in sight first step out below
    expect(down).toEqual(pageFor({ first: 64 + 32 - 14 + 1, count: 14 }, 512, page));
    expect(down.start).toBeGreaterThan(64);
    const up = pageAhead(page, { first: 64 + PAGE_STEP, count: 14 }, 512, false)!;
    expect(up).toEqual(pageFor({ first: 63, count: 14 }, 512, page));
    expect(up.start).toBeLessThan(64);
    // nothing beyond either end
    expect(pageAhead({ start: 0, size: 32 }, { first: 0, count: 14 }, 512, false)).toBeNull();
    expect(pageAhead({ start: 480, size: 32 }, { first: 498, count: 14 }, 512, true)).toBeNull();
    expect(pageAhead({ start: 0, size: 5 }, { first: 0, count: 14 }, 5, true)).toBeNull();
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
