/**
 * jsdom component tests: a React root on a fresh `<div>` in the document for each test,
 * unmounted and removed after it. jsdom lays nothing out, so `clientSize` gives every
 * element a client box (what virtualisers and canvases read) for the test's length.
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach } from "vitest";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

export interface DomRoot {
  readonly host: HTMLDivElement;
  readonly root: Root;
}

export function domRootEachTest(opts: { clientSize?: { width: number; height: number } } = {}): DomRoot {
  let host: HTMLDivElement | null = null;
  let root: Root | null = null;
  beforeEach(() => {
    const size = opts.clientSize;
    if (size) {
      Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => size.height });
      Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => size.width });
    }
    host = document.createElement("div");
    document.body.appendChild(host);
    root = createRoot(host);
  });
  afterEach(() => {
    const r = root;
    if (r) act(() => r.unmount());
    host?.remove();
    host = root = null;
    if (opts.clientSize) {
      delete (HTMLElement.prototype as { clientHeight?: number }).clientHeight;
      delete (HTMLElement.prototype as { clientWidth?: number }).clientWidth;
    }
  });
  return {
    get host() {
      if (!host) throw new Error("domRootEachTest: host used outside a test");
      return host;
    },
    get root() {
      if (!root) throw new Error("domRootEachTest: root used outside a test");
      return root;
    },
  };
}
