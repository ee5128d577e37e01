/**
 * The shared lane grammar (lib/contracts/lanes.ts) and the browser's entry points
 * (lib/charts/lane-selection.ts checkSelection / resolveLocally): one table of selections,
 * valid and invalid. Both must give the server's message and keep the same lanes.
 */
import { describe, expect, it } from "vitest";
import { checkSelection, resolveLocally } from "@/lib/charts/lane-selection";
import { ApiError } from "@/lib/contracts/errors";
import { laneKey, matchLanes, parseLaneSelection } from "@/lib/contracts/lanes";

const LANES = [
  { node: "10.0.0.1", gpu: 0, index: 0, ranks: [0], engine_addrs: ["http://10.0.0.1:15000"], roles: ["train", "rollout"] },
  { node: "10.0.0.1", gpu: 1, index: 1, ranks: [1], engine_addrs: [], roles: ["train"] },
  { node: "10.0.0.2", gpu: 0, index: 2, ranks: [2], engine_addrs: ["http://10.0.0.2:15001"], roles: ["rollout"] },
  { node: "10.0.0.2", gpu: 1, index: 3, ranks: [3], engine_addrs: [], roles: ["train"] },
];

function contractError(sel: string): string | null {
  try {
    parseLaneSelection(sel);
    return null;
  } catch (e) {
    if (!ApiError.is(e) || e.code !== "bad_request") throw e;
    return e.message;
  }
}

// [selection, server message or null when valid]
const TABLE: [string, string | null][] = [
  ["", null],
  ["all", null],
  ["g:0-1", null],
  ["g:2", null],
  ["g:3-", null],
  ["g:1-0", null],
  [" g:0 , ,every:2 ", null],
  ["g:1_0", null],
  ["rank:1-2", null],
  ["node:10.0.0.2", null],
  ["gpu:10.0.0.1:1", null],
  ["gpu:10.9.9.9:7", null],
  ["engine:15001", null],
  ["every:2", null],
  ["role:train", null],
  ["role:rollout", null],
  ["g", "bad lane selector 'g': expected kind:value"],
  ["rank:", "bad lane selector 'rank:': expected kind:value"],
  ["gpu:3", "bad lane selector 'gpu:3': expected gpu:<node>:<index>"],
  ["gpu::3", "bad lane selector 'gpu::3': expected gpu:<node>:<index>"],
  ["every:0", "bad lane selector 'every:0': stride must be positive"],
  ["every:-2", "bad lane selector 'every:-2': stride must be positive"],
  ["role:critic", "bad lane selector 'role:critic': role must be train or rollout"],
  ["lane:3", "unknown lane selector kind 'lane' in 'lane:3'"],
  ["g:0,bogus:1", "unknown lane selector kind 'bogus' in 'bogus:1'"],
  ["g:x", "invalid literal for int() with base 10: 'x'"],
  ["rank:1-y", "invalid literal for int() with base 10: 'y'"],
  ["every:two", "invalid literal for int() with base 10: 'two'"],
  ["gpu:n1:x", "invalid literal for int() with base 10: 'x'"],
];

describe("the lane grammar: contract and browser entry points agree", () => {
  it.each(TABLE)("%j", (sel, serverMsg) => {
    expect(contractError(sel)).toBe(serverMsg);
    expect(checkSelection(sel)).toBe(serverMsg);
    if (serverMsg !== null) {
      expect(resolveLocally(sel, LANES)).toBeNull(); // malformed: left to the server
      return;
    }
    const kept = matchLanes(sel, LANES).map((l) => laneKey(l.node, l.gpu));
    const local = resolveLocally(sel, LANES);
    // The browser resolves only index-only terms (g, gpu, node, every); null = ask the server.
    if (local !== null) expect(local.map((l) => laneKey(l.node, l.gpu))).toEqual(kept);
    else expect(/\b(rank|engine|role):/.test(sel)).toBe(true);
  });

  it("matches by catalog fields on the server side", () => {
    const keys = (sel: string) => matchLanes(sel, LANES).map((l) => l.index);
    expect(keys("rank:1-2")).toEqual([1, 2]);
    expect(keys("engine:15001")).toEqual([2]);
    expect(keys("role:rollout")).toEqual([0, 2]);
    expect(keys("gpu:10.9.9.9:7")).toEqual([]);
    expect(keys("all")).toEqual([0, 1, 2, 3]);
  });
});
