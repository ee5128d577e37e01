import { act } from "react";
import { describe, expect, it } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { prepareConversation } from "@/lib/rollout-view/conversation";
import { messages0 } from "@/lib/rollout-view/testing/golden";
import { Conversation } from "./Conversation";

const dom = domRootEachTest();

describe("Conversation", () => {
  it("shows role cards, a tool-call chip with pretty arguments, and collapses system/tool bodies", () => {
    const cards = prepareConversation(messages0.messages, messages0.prompt);
    act(() =>
      dom.root.render(
        <Conversation cards={cards} tokens={null} alignment={null} scale={null} metricsOn={false} onMetrics={() => {}} tokensLoading={false} onOpenRange={() => {}} />,
      ),
    );
    const articles = dom.host.querySelectorAll("[data-testid=message-card]");
    expect(articles).toHaveLength(5);
    expect(dom.host.querySelector("[data-testid=tool-call-chip]")?.textContent).toContain("lookup");
    expect(dom.host.querySelector(".sv-args")?.textContent).toBe('{\n  "query": "answer"\n}');
    expect(dom.host.textContent).not.toContain("You are a helpful assistant.");
    const sys = articles[0]!.querySelector("button")!;
    act(() => sys.click());
    expect(dom.host.textContent).toContain("You are a helpful assistant.");
    expect(dom.host.querySelector(".sv-thinking")?.textContent).toContain("call the lookup tool first");
  });
});
