import { describe, expect, it } from "vitest";
import { decodeRange, encodeRange, patchSearch, readableQuery } from "@/lib/charts/core/url";

describe("range codec", () => {
  it("round-trips and keeps unix seconds to 0.01 s", () => {
    expect(decodeRange(encodeRange([1712345678.25, 1712349999.75]))).toEqual([1712345678.25, 1712349999.75]);
    expect(decodeRange("3~1")).toEqual([1, 3]);
    expect(decodeRange("bad")).toBeNull();
    expect(decodeRange("2~2")).toBeNull();
  });
});

describe("patchSearch", () => {
  it("patches a query string: set, replace a list, remove", () => {
    const q = patchSearch("eval=1&f=a:1&sort=x:asc", { f: ["b:2", "c:3"], sort: null, tab: "groups" });
    expect(q.toString()).toBe("eval=1&f=b%3A2&f=c%3A3&tab=groups");
  });
});

describe("readableQuery", () => {
  it("leaves : , / ~ readable and keeps a literal % encoded", () => {
    expect(readableQuery(new URLSearchParams({ lanes: "g:0-31,rank:2", x: "10~40", "y:perf/step_time": "1~2", q: "50%" }))).toBe(
      "lanes=g:0-31,rank:2&x=10~40&y:perf/step_time=1~2&q=50%25",
    );
  });
});
