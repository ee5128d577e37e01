import { act } from "react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RelativeTime } from "./RelativeTime";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => {
  vi.useRealTimers();
  document.body.innerHTML = "";
});

describe("RelativeTime (#15 defect 2)", () => {
  it("hydrates a server render from another moment without a mismatch, then shows the age", async () => {
    vi.useFakeTimers({ now: 1_000_000_000_000 });
    const ts = 1_000_000_000 - 42;
    const html = renderToString(<RelativeTime ts={ts} />);
    // the server's text carries no clock-derived text
    expect(html).toContain("—");
    expect(html).not.toContain("ago");
    vi.setSystemTime(1_000_000_007_000); // the browser hydrates 7 s later
    const host = document.createElement("div");
    host.innerHTML = html;
    document.body.appendChild(host);
    const errors: unknown[] = [];
    await act(async () => {
      hydrateRoot(host, <RelativeTime ts={ts} />, { onRecoverableError: (e) => errors.push(e) });
    });
    expect(errors).toEqual([]);
    expect(host.textContent).toBe("49 s ago");
    expect(host.querySelector("span")!.title).toBe("2001-09-09 01:45:58 UTC");
    await act(async () => {
      vi.advanceTimersByTime(1000);
    });
    expect(host.textContent).toBe("50 s ago");
  });
});
