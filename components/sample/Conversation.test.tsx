import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prepareConversation } from "@/lib/rollout-view/conversation";
import { messages0 } from "@/lib/rollout-view/testing/golden";
import { Conversation } from "./Conversation";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let host: HTMLDivElement;
let root: Root;
beforeEach(() => {
  host = document.createElement("div");
  document.body.appendChild(host);
  root = createRoot(host);
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

describe("Conversation", () => {
  it("shows role cards, a tool-call chip with pretty arguments, and collapses system/tool bodies", () => {
    const cards = prepareConversation(messages0.messages, messages0.prompt);
    act(() =>
      root.render(
        <Conversation cards={cards} tokens={null} alignment={null} scale={null} metricsOn={false} onMetrics={() => {}} tokensLoading={false} onOpenRange={() => {}} />,
      ),
    );
    const articles = host.querySelectorAll("[data-testid=message-card]");
    expect(articles).toHaveLength(5);
    expect(host.querySelector("[data-testid=tool-call-chip]")?.textContent).toContain("lookup");
    expect(host.querySelector(".sv-args")?.textContent).toBe('{\n  "query": "answer"\n}');
    expect(host.textContent).not.toContain("You are a helpful assistant.");
    const sys = articles[0]!.querySelector("button")!;
    act(() => sys.click());
    expect(host.textContent).toContain("You are a helpful assistant.");
    expect(host.querySelector(".sv-thinking")?.textContent).toContain("call the lookup tool first");
  });
});
