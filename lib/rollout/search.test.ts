import { describe, expect, it } from "vitest";
import { compileQuery, conversationTexts, pickSteps, searchRollouts, SEARCH_LIMITS, type SearchDumps } from "./search";

function dumps(texts: Record<number, string[]>): SearchDumps {
  return {
    listRolloutIds: async () => ({ train: Object.keys(texts).map(Number), eval: [] }),
    sidecarRows: async () => null,
    sampleRecords: async (rolloutId) => (texts[rolloutId] ?? []).map((t, i) => ({ index: i, prompt: "p", response: t })),
  };
}

describe("rollout search", () => {
  it("returns the first 200 hits and counts them all", async () => {
    const a = await searchRollouts(dumps({ 0: ["ab ".repeat(150), "AB ".repeat(150)] }), { q: "ab", regex: false, range: { lo: 0, hi: 0 } });
    expect(a.total).toBe(300);
    expect(a.returned).toBe(SEARCH_LIMITS.MAX_HITS);
    expect(a.samples.map((s) => s.hits.length)).toEqual([150, 50]);
    expect(a.samples[1]!.hits[0]).toMatchObject({ field: "response", message: null, offset: 0, length: 2, pre: 0 });
  });

  it("literal text is escaped, regex is not; an invalid regex is a 422", () => {
    expect(compileQuery("a.b", false).test("axb")).toBe(false);
    expect(compileQuery("a.b", true).test("axb")).toBe(true);
    expect(() => compileQuery("(", true)).toThrow(expect.objectContaining({ code: "unprocessable" }));
  });

  it("a regex that backtracks without end is stopped at the time budget, and the server goes on", async () => {
    // (\w+\s?)+$ against 40 words and a "!" backtracks through ~2^40 ways to split them
    // (hours); the search must give up at its budget with what it has, like any slow search.
    const words = "ab ".repeat(40) + "!";
    const texts = { 0: ["ab here", words], 1: [words, "ab again"] };
    const t = performance.now();
    const a = await searchRollouts(dumps(texts), { q: "(\\w+\\s?)+$", regex: true, range: { lo: 0, hi: 1 } });
    const ms = performance.now() - t;
    expect(a.truncated).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(SEARCH_LIMITS.TIME_BUDGET_MS - 50);
    expect(ms).toBeLessThan(SEARCH_LIMITS.TIME_BUDGET_MS + 1_500);
    // the hit before the stuck text is kept ("ab here" ends the text with a word: a match)
    expect(a.samples[0]).toMatchObject({ rollout_id: 0, sample_index: 0 });
    expect(a.returned).toBe(a.samples.reduce((n, sm) => n + sm.hits.length, 0));
    expect(a.total).toBeGreaterThanOrEqual(a.returned);
    // the process goes on: the same pattern on a text without the trap answers at once
    const b = await searchRollouts(dumps({ 0: ["ab ab"] }), { q: "(\\w+\\s?)+$", regex: true, range: { lo: 0, hi: 0 } });
    expect(b).toMatchObject({ total: 2, truncated: false });
    expect(b.samples[0]!.hits.map((h) => [h.field, h.length])).toEqual([
      ["prompt", 1],
      ["response", 5],
    ]);
  }, 15_000);

  it("conversation texts: roles map to fields, tool calls as name(arguments)", () => {
    const t = conversationTexts("sys", [
      { role: "user", content: "q" },
      { role: "assistant", content: "a", reasoning_content: "r", tool_calls: [{ function: { name: "f", arguments: '{"x":1}' } }] },
      { role: "tool", content: "out" },
    ]);
    expect(t.map((x) => [x.field, x.message, x.text])).toEqual([
      ["prompt", null, "sys"],
      ["prompt", 0, "q"],
      ["response", 1, "a"],
      ["reasoning", 1, "r"],
      ["tool_call", 1, 'f({"x":1})'],
      ["tool_call", 2, "out"],
    ]);
  });

  it("step ranges keep existing steps, at most the newest 64; no range = the newest step", () => {
    const ids = Array.from({ length: 100 }, (_, i) => i);
    expect(pickSteps(ids, null)).toEqual([99]);
    expect(pickSteps(ids, { lo: 10, hi: 12 })).toEqual([10, 11, 12]);
    expect(pickSteps(ids, { lo: 0, hi: 99 })).toHaveLength(64);
  });
});
