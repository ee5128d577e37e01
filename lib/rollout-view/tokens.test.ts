import { describe, expect, it } from "vitest";
import { prepareConversation } from "./conversation";
import { alignTurns, defaultStat, displayToken, layoutLines, maskedRuns, prepareTokenChart, prepareTokens, rangeMean, statColor, statScale, tokenTooltip } from "./tokens";
import { messages0, tokens0, tokens0Window, tokensEval0 } from "./testing/golden";
import type { TokensResponse } from "./types";

describe("prepareTokens", () => {
  it("aligns response stats to window positions and leaves the prompt uncoloured", () => {
    const m = prepareTokens(tokens0Window);
    expect(m.n).toBe(7);
    expect(m.respStart).toBe(4);
    expect(Number.isNaN(m.stats.imp_ratio![3]!)).toBe(true);
    expect(m.stats.imp_ratio![4]).toBe(tokens0Window.imp_ratio![0]);
    expect(m.available[0]).toBe("imp_ratio");
    expect(tokenTooltip(m, 0)).toBe('#2 id=65 "t65"\n(prompt)');
    expect(tokenTooltip(m, 4)).toContain("imp_ratio = 1.161");
  });
  it("keeps only rollout log-probs on eval samples", () => {
    const m = prepareTokens(tokensEval0);
    expect(m.available).toEqual(["rollout_log_probs"]);
    expect(defaultStat(m.available)).toBe("rollout_log_probs");
  });
  it("shows ids without a tokenizer and marks newlines", () => {
    expect(displayToken(null, 17)).toBe("·17");
    expect(displayToken("a\nb", 1)).toBe("a⏎b");
  });
});

describe("colour scales", () => {
  it("imp_ratio is diverging on ln(v): e is full red, 1/e full blue, 1 clear", () => {
    const s = statScale("imp_ratio", Float64Array.from([0.5, 2]));
    expect(statColor(s, Math.E)).toBe("rgba(227, 73, 72, 0.850)");
    expect(statColor(s, 1 / Math.E)).toBe("rgba(42, 120, 214, 0.850)");
    expect(statColor(s, 1)).toBe("rgba(227, 73, 72, 0.000)");
    expect(statColor(s, Number.NaN)).toBeNull();
  });
  it("log-probs darken as they get lower", () => {
    const s = statScale("rollout_log_probs", Float64Array.from([-3, -0.1]));
    expect(statColor(s, -3)).toBe("rgba(27, 175, 122, 0.850)");
    expect(statColor(s, -0.1)).toBe("rgba(27, 175, 122, 0.000)");
  });
});

describe("prepareTokenChart", () => {
  it("plots response tokens at absolute positions with a strong prompt band and light masked bands", () => {
    const p: TokensResponse = { ...tokens0, loss_mask: tokens0.loss_mask!.map((v, i) => (i >= 3 && i < 6 ? 0 : v)) };
    const m = prepareTokens(p);
    const c = prepareTokenChart(m, "lp_diff");
    expect(c.series[0]!.x[0]).toBe(tokens0.prompt_len);
    expect(c.series[0]!.x.length).toBe(tokens0.total_len - tokens0.prompt_len);
    expect(c.bands[0]).toEqual({ x0: 0, x1: tokens0.prompt_len, strong: true, label: "prompt" });
    expect(maskedRuns(m)).toEqual([[tokens0.prompt_len + 3, tokens0.prompt_len + 6]]);
    expect(c.bands[1]).toMatchObject({ strong: false });
  });
});

describe("layoutLines", () => {
  it("wraps greedily and breaks after newline tokens", () => {
    expect(Array.from(layoutLines([3, 3, 3, 3], [0, 0, 0, 0], 7))).toEqual([0, 2]);
    expect(Array.from(layoutLines([1, 1, 1], [1, 0, 0], 10))).toEqual([0, 1]);
    expect(Array.from(layoutLines([20], [0], 10))).toEqual([0]);
  });
});

describe("alignTurns", () => {
  const cards = prepareConversation(messages0.messages, messages0.prompt);
  it("splits turns on loss-mask runs: trained runs are turns, masked runs the tool output between", () => {
    const respLen = tokens0.total_len - tokens0.prompt_len;
    const mask = Array.from({ length: respLen }, (_, i) => (i >= 10 && i < 14 ? 0 : 1));
    const m = prepareTokens({ ...tokens0, loss_mask: mask });
    const a = alignTurns(cards, m);
    const P = tokens0.prompt_len;
    expect(a.method).toBe("loss_mask");
    expect(a.ranges.get(2)).toEqual([P, P + 10]);
    expect(a.ranges.get(3)).toEqual([P + 10, P + 14]);
    expect(a.ranges.get(4)).toEqual([P + 14, P + respLen]);
    expect(rangeMean(m, "imp_ratio", a.ranges.get(2)!)).not.toBeNull();
  });
  it("falls back to matching each turn's words in the decoded response", () => {
    const words = "Let me look that up. ok The answer for sample 0 is 42.".split(/(?<= )/);
    const respLen = tokens0.total_len - tokens0.prompt_len;
    const text = [...tokens0.token_text!.slice(0, tokens0.prompt_len), ...Array.from({ length: respLen }, (_, i) => words[i] ?? "x")];
    const m = prepareTokens({ ...tokens0, token_text: text });
    const a = alignTurns(cards, m);
    expect(a.method).toBe("text");
    const P = tokens0.prompt_len;
    expect(a.ranges.get(2)).toEqual([P, P + 6]);
    expect(a.ranges.get(4)![0]).toBe(P + 6);
  });
  it("admits it cannot split a multi-turn response without boundaries", () => {
    expect(alignTurns(cards, prepareTokens(tokens0)).method).toBe("none");
    const single = prepareConversation([{ role: "user", content: "q" }, { role: "assistant", content: "a" }]);
    expect(alignTurns(single, prepareTokens(tokens0)).method).toBe("single");
  });
});
