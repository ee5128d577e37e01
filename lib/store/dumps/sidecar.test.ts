import { describe, expect, test } from "vitest";
import { parseSidecar } from "./sidecar";

describe("trajectory sidecar: a bad line fails only its own sample", () => {
  test("later valid duplicates win; NaN is accepted", () => {
    const idx = parseSidecar('{"sample_index":0,"reward":1}\n{"sample_index":0,"reward":NaN}\n');
    expect(Number.isNaN(idx.rows.get(0)?.reward)).toBe(true);
    expect(idx.corruptLines).toBe(0);
  });

  test("a torn line marks its sample broken at that line; other samples answer", () => {
    const idx = parseSidecar('{"sample_index":0,"messages":[{"role":"user","content":"hal\n{"sample_index":1,"reward":0}\n');
    expect(idx.broken).toEqual(new Map([[0, 1]]));
    expect(idx.rows.get(1)).toEqual({ sample_index: 1, reward: 0 });
    expect(idx.rows.has(0)).toBe(false);
    expect(idx.corruptLines).toBe(1);
  });

  test("a garbage line belongs to no sample; a valid line beats a broken one in either order", () => {
    const idx = parseSidecar(
      ['\u0001garbage {{', '{"sample_index":2,"reward":1}', '{"sample_index": 2, "rew', '{"sample_index":3,"x', '{"sample_index":3,"reward":3}'].join("\n"),
    );
    expect([...idx.broken]).toEqual([]);
    expect(idx.rows.get(2)).toEqual({ sample_index: 2, reward: 1 });
    expect(idx.rows.get(3)).toEqual({ sample_index: 3, reward: 3 });
    expect(idx.corruptLines).toBe(3);
  });
});
