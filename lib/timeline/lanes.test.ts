import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/contracts/errors";
import type { LaneInfo } from "@/lib/store/telemetry";
import { resolveLanes } from "@/lib/timeline/lanes";

const lanes: LaneInfo[] = [
  { node: "10.0.0.1", gpu: 0, index: 0, ranks: [0], engine_addrs: ["http://10.0.0.1:15000"], roles: ["rollout", "train"] },
  { node: "10.0.0.1", gpu: 1, index: 1, ranks: [1], engine_addrs: ["http://10.0.0.1:15000"], roles: ["rollout", "train"] },
  { node: "10.0.0.2", gpu: 0, index: 2, ranks: [2, 3], engine_addrs: [], roles: ["train"] },
  { node: "10.0.0.2", gpu: 1, index: 3, ranks: [], engine_addrs: ["http://10.0.0.2:15004"], roles: ["rollout"] },
];

function pick(g: string): string[] {
  const sel = resolveLanes(g, lanes);
  if (sel === null) return ["ALL"];
  return lanes.filter((l) => sel.has(l.node, l.gpu)).map((l) => `g${l.index}`);
}

function error(g: string): string {
  try {
    resolveLanes(g, lanes);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).message;
  }
  throw new Error(`no error for ${g}`);
}

describe("lane-selection grammar", () => {
  it("selects everything for null, blank and 'all'", () => {
    expect(resolveLanes(null, lanes)).toBeNull();
    expect(resolveLanes(undefined, lanes)).toBeNull();
    expect(pick("  ")).toEqual(["ALL"]);
    expect(pick(" all ")).toEqual(["ALL"]);
  });

  it("resolves each kind and unions the tokens", () => {
    expect(pick("g:1-2")).toEqual(["g1", "g2"]);
    expect(pick("g:3")).toEqual(["g3"]);
    expect(pick("g:2-")).toEqual(["g2"]);
    expect(pick("rank:3")).toEqual(["g2"]);
    expect(pick("rank: 0 - 1")).toEqual(["g0", "g1"]);
    expect(pick("node:10.0.0.2")).toEqual(["g2", "g3"]);
    expect(pick("engine:15004")).toEqual(["g3"]);
    expect(pick("every:2")).toEqual(["g0", "g2"]);
    expect(pick("role:train")).toEqual(["g0", "g1", "g2"]);
    expect(pick("role:rollout, g:2 ,,")).toEqual(["g0", "g1", "g2", "g3"]);
  });

  it("treats matches-nothing as an empty selection, not everything", () => {
    expect(pick("g:3-1")).toEqual([]);
    expect(pick("node:nowhere")).toEqual([]);
  });

  it("selects an exact gpu even if unknown", () => {
    const sel = resolveLanes("gpu:10.9.9.9:7", lanes)!;
    expect(sel.has("10.9.9.9", 7)).toBe(true);
    expect(pick("gpu:10.0.0.1:1")).toEqual(["g1"]);
  });

  it("rejects bad selectors with the reference's messages", () => {
    expect(error("bogus:1")).toBe("unknown lane selector kind 'bogus' in 'bogus:1'");
    expect(error("g")).toBe("bad lane selector 'g': expected kind:value");
    expect(error("g:")).toBe("bad lane selector 'g:': expected kind:value");
    expect(error("all,rank:1")).toBe("bad lane selector 'all': expected kind:value");
    expect(error("every:0")).toContain("stride must be positive");
    expect(error("role:gpu")).toContain("role must be train or rollout");
    expect(error("gpu::3")).toContain("expected gpu:<node>:<index>");
    expect(error("g:x")).toContain("invalid literal for int()");
    expect(error("rank:-1")).toContain("invalid literal for int()");
  });
});
