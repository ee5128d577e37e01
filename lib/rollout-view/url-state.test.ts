import { describe, expect, it } from "vitest";
import { parseColumns, parseFilters, parseSort, serializeFilters, serializeSort } from "./url-state";

describe("URL view state", () => {
  it("round-trips multi-column sorting and drops unknown columns", () => {
    const s = parseSort("raw_reward:desc,sample_index:asc,bogus:desc", ["raw_reward", "sample_index"]);
    expect(s).toEqual([
      { id: "raw_reward", desc: true },
      { id: "sample_index", desc: false },
    ]);
    expect(serializeSort(s)).toBe("raw_reward:desc,sample_index:asc");
    expect(serializeSort([])).toBeNull();
  });
  it("round-trips filters whose expressions contain colons and spaces", () => {
    const f = parseFilters(["status:=a:b", "raw_reward:>0 <1", "empty:", "nocolon"]);
    expect(f).toEqual([
      { id: "status", value: "=a:b" },
      { id: "raw_reward", value: ">0 <1" },
    ]);
    expect(serializeFilters(f)).toEqual(["status:=a:b", "raw_reward:>0 <1"]);
  });
  it("keeps only known visible columns and falls back to defaults when none remain", () => {
    expect(parseColumns("a,zz,b", ["a", "b"])).toEqual(["a", "b"]);
    expect(parseColumns("zz", ["a"])).toBeNull();
    expect(parseColumns(null, ["a"])).toBeNull();
  });
});
