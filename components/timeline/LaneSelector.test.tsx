import { act } from "react";
import { describe, expect, it, vi } from "vitest";
import { domRootEachTest } from "@/lib/testing/dom-root";
import { LaneSelector, reversedRangeNotes } from "@/components/timeline/LaneSelector";

const dom = domRootEachTest();

function type(input: HTMLInputElement, value: string) {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the native setter bypasses React's value tracker, as real typing does
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
  setter.call(input, value);
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function render(props: Partial<Parameters<typeof LaneSelector>[0]> & { onChange: (s: string) => void }) {
  act(() =>
    dom.root.render(
      <LaneSelector selection="g:0-3" serverError={null} total={4} shown={4} onPick={async () => null} {...props} />,
    ),
  );
}

describe("LaneSelector", () => {
  it("shows one chip per term and appends a typed term on Enter", () => {
    const onChange = vi.fn();
    render({ onChange });
    expect(dom.host.querySelectorAll('[data-testid="lane-chip"]')).toHaveLength(1);
    const input = dom.host.querySelector<HTMLInputElement>('input[aria-label="Add lanes"]')!;
    act(() => {
      type(input, "rank:2");
    });
    act(() => {
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    });
    expect(onChange).toHaveBeenCalledWith("g:0-3,rank:2");
    expect(input.value).toBe("");
  });

  it("flags a bad term inline, keeps the text and changes nothing", () => {
    const onChange = vi.fn();
    render({ onChange });
    const input = dom.host.querySelector<HTMLInputElement>('input[aria-label="Add lanes"]')!;
    act(() => {
      type(input, "bogus:1");
    });
    act(() => {
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    });
    expect(onChange).not.toHaveBeenCalled();
    expect(dom.host.querySelector('[data-testid="lane-error"]')?.textContent).toContain("unknown lane selector kind 'bogus'");
    expect(input.value).toBe("bogus:1");
    expect(input.getAttribute("aria-invalid")).toBe("true");
  });

  it("refuses a reversed range, says why and how to write it; a deep link with one is flagged (#15 defect 9)", () => {
    const onChange = vi.fn();
    render({ onChange });
    const input = dom.host.querySelector<HTMLInputElement>('input[aria-label="Add lanes"]')!;
    act(() => {
      type(input, "g:5-2");
    });
    act(() => {
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    });
    expect(onChange).not.toHaveBeenCalled();
    expect(dom.host.querySelector('[data-testid="lane-error"]')?.textContent).toBe("g:5-2 matches no lane: a range runs low to high — g:2-5");
    expect(input.value).toBe("g:5-2");
    render({ onChange, selection: "rank:7-1", total: 0, shown: 0 });
    expect(dom.host.querySelector('[data-testid="lane-warning"]')?.textContent).toBe("rank:7-1 matches no lane: a range runs low to high — rank:1-7");
    expect(reversedRangeNotes("g:0-3,g:2,rank:4-4")).toEqual([]);
  });

  it("keeps typed text when the selection is refreshed from outside", () => {
    const onChange = vi.fn();
    render({ onChange });
    const input = dom.host.querySelector<HTMLInputElement>('input[aria-label="Add lanes"]')!;
    act(() => {
      type(input, "g:1");
    });
    render({ onChange, selection: "g:0-3", total: 4 });
    expect(dom.host.querySelector<HTMLInputElement>('input[aria-label="Add lanes"]')!.value).toBe("g:1");
  });

  it("says rows are drawn a page at a time past one page, and shows the server's error", () => {
    render({ onChange: vi.fn(), total: 40, shown: 32, serverError: "bad lane selector 'x': expected kind:value" });
    expect(dom.host.textContent).toContain("40 lanes shown");
    expect(dom.host.textContent).toContain("rows are drawn 32 at a time as you scroll");
    expect(dom.host.querySelector('[role="alert"]')?.textContent).toContain("expected kind:value");
  });
});
