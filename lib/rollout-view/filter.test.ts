import { describe, expect, it } from "vitest";
import { matchesFilter, parseFilter } from "./filter";

const keep = (expr: string, values: (number | string | boolean | null)[]) => values.filter((v) => matchesFilter(v, expr));

describe("column filter grammar", () => {
  it("compares numbers and keeps ranges inclusive", () => {
    expect(keep(">0.5", [0, 0.5, 1, null])).toEqual([1]);
    expect(keep("<=3", [2, 3, 4])).toEqual([2, 3]);
    expect(keep("2..4", [1, 2, 3, 4, 5])).toEqual([2, 3, 4]);
    expect(keep("!=0", [0, 1, null])).toEqual([1, null]);
    expect(keep("7", [7, 8])).toEqual([7]);
  });
  it("matches booleans, null and text", () => {
    expect(keep("true", [true, false, null])).toEqual([true]);
    expect(keep("no", [true, false])).toEqual([false]);
    expect(keep("null", [1, null])).toEqual([null]);
    expect(keep("!null", [1, null])).toEqual([1]);
    expect(keep("comp", ["completed", "truncated"])).toEqual(["completed"]);
    expect(keep("!trunc", ["completed", "truncated"])).toEqual(["completed"]);
    expect(keep("=v1", ["v1", "v0–v1"])).toEqual(["v1"]);
  });
  it("ANDs space-separated terms", () => {
    expect(keep(">1 <4", [1, 2, 3, 4])).toEqual([2, 3]);
  });
  it("reports a malformed comparison and lets every row through", () => {
    const p = parseFilter(">abc");
    expect(p.ok).toBe(false);
    expect(keep(">abc", [1, 2])).toEqual([1, 2]);
  });
});
