import { act } from "react";
import { describe, expect, it } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { prepareTokens, statScale } from "@/lib/rollout-view/tokens";
import type { TokensResponse } from "@/lib/rollout-view/types";
import { TokenStrip } from "./TokenStrip";

function payload(total: number, prompt: number): TokensResponse {
  const resp = total - prompt;
  const stat = Array.from({ length: resp }, (_, i) => Math.sin(i) * 0.5);
  return {
    rollout_id: 0,
    sample_index: 0,
    evaluation: false,
    total_len: total,
    prompt_len: prompt,
    start: 0,
    end: total,
    response_offset: prompt,
    token_ids: Array.from({ length: total }, (_, i) => i % 500),
    token_text: Array.from({ length: total }, (_, i) => (i % 97 === 0 ? "\n" : ` w${i % 500}`)),
    loss_mask: Array.from({ length: resp }, (_, i) => (i % 50 < 5 ? 0 : 1)),
    rollout_log_probs: stat,
    train_log_probs: stat,
    ref_log_probs: null,
    lp_diff: stat,
    imp_ratio: stat.map((v) => Math.exp(v)),
    entropy: null,
    ref_entropy: null,
    advantages: null,
    returns: null,
  };
}

const dom = domRootEachTest({ clientSize: { width: 900, height: 440 } });

describe("TokenStrip", () => {
  it("renders an 8k-token sample as a window of lines, not one node per token", () => {
    const m = prepareTokens(payload(8192, 200));
    const scale = statScale("imp_ratio", m.stats.imp_ratio!);
    act(() => dom.root.render(<TokenStrip model={m} scale={scale} highlight={null} />));
    const toks = dom.host.querySelectorAll(".ts-tok");
    expect(toks.length).toBeGreaterThan(50);
    expect(toks.length).toBeLessThan(1500);
    expect(dom.host.querySelector(".ts-prompt")).not.toBeNull();
  });

  it("colours response tokens, dims loss-masked ones and marks the highlighted range", () => {
    const m = prepareTokens(payload(300, 10));
    const scale = statScale("lp_diff", m.stats.lp_diff!);
    act(() => dom.root.render(<TokenStrip model={m} scale={scale} highlight={[20, 30]} />));
    const coloured = [...dom.host.querySelectorAll<HTMLElement>(".ts-tok")].filter((el) => el.style.background !== "");
    expect(coloured.length).toBeGreaterThan(100);
    expect(dom.host.querySelectorAll(".ts-masked").length).toBeGreaterThan(10);
    expect(dom.host.querySelectorAll(".ts-hl")).toHaveLength(10);
  });
});
