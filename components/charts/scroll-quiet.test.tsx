import { act } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { SCROLL_QUIET_MS, useQuietWhileScrolling } from "./scroll-quiet";

function Card() {
  useQuietWhileScrolling();
  return <article className="chart-card" />;
}

const dom = domRootEachTest();
const scrolling = () => document.documentElement.hasAttribute("data-scrolling");
const scroll = () => window.dispatchEvent(new Event("scroll"));

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("useQuietWhileScrolling", () => {
  it("marks the page as scrolling until SCROLL_QUIET_MS after its last scroll event", () => {
    act(() => dom.root.render(<><Card /><Card /></>));
    expect(scrolling()).toBe(false);
    scroll();
    expect(scrolling()).toBe(true);
    vi.advanceTimersByTime(SCROLL_QUIET_MS - 10);
    scroll(); // still scrolling: the quiet period starts again
    vi.advanceTimersByTime(SCROLL_QUIET_MS - 10);
    expect(scrolling()).toBe(true);
    vi.advanceTimersByTime(20);
    expect(scrolling()).toBe(false);
  });

  it("holds one listener while any card is mounted, and leaves no mark behind", () => {
    const add = vi.spyOn(window, "addEventListener");
    act(() => dom.root.render(<><Card /><Card /><Card /></>));
    expect(add.mock.calls.filter(([type]) => type === "scroll")).toHaveLength(1);
    act(() => dom.root.render(<Card />));
    scroll();
    expect(scrolling()).toBe(true);
    act(() => dom.root.render(<></>));
    expect(scrolling()).toBe(false); // unmounted mid-scroll: the mark goes with the last card
    scroll();
    expect(scrolling()).toBe(false); // and nothing listens any more
    add.mockRestore();
  });
});
