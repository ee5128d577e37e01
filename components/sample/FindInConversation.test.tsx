import { act } from "react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { FindInConversation, findRanges } from "./FindInConversation";

const dom = domRootEachTest();
beforeEach(() => {
  Element.prototype.scrollIntoView = vi.fn();
});

const frame = async () => {
  await act(() => new Promise<void>((r) => requestAnimationFrame(() => r())));
};

function type(input: HTMLInputElement, value: string) {
  const desc = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!;
  act(() => {
    desc.set!.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

describe("FindInConversation", () => {
  it("finds every case-insensitive match in the text nodes", () => {
    const div = document.createElement("div");
    div.innerHTML = "<p>Weather <b>weather</b></p><p>WEATHERweather</p>";
    expect(findRanges(div, "weather").map((r) => r.toString())).toEqual(["Weather", "weather", "WEATHER", "weather"]);
    expect(findRanges(div, "")).toEqual([]);
  });

  it("counts matches in the conversation, expands the cards and steps with Enter", async () => {
    const expand = vi.fn();
    act(() =>
      dom.root.render(
        <section>
          <FindInConversation onExpandAll={expand} />
          <div className="sv-cards">
            <p>alpha beta</p>
            <p>Alpha</p>
          </div>
        </section>,
      ),
    );
    const input = dom.host.querySelector("input")!;
    type(input, "alpha");
    await frame();
    expect(expand).toHaveBeenCalledTimes(1);
    const count = dom.host.querySelector('[data-testid="find-count"]')!;
    expect(count.textContent).toBe("1 / 2");
    act(() => {
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    });
    expect(count.textContent).toBe("2 / 2");
    type(input, "zeta");
    await frame();
    expect(count.textContent).toBe("no matches");
  });
});
