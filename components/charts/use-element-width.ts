"use client";

import { useEffect, useLayoutEffect, useState, type RefObject } from "react";

/**
 * Content-box width of an element in CSS px, kept current by a ResizeObserver (external
 * system: layout). A zero width (element hidden or not laid out, e.g. in jsdom) keeps the
 * last known width, starting from `initial`.
 */
export function useElementWidth(ref: RefObject<HTMLElement | null>, initial = 0): number {
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const now = Math.floor(el.clientWidth);
    if (now > 0) setWidth(now);
    return observeWidth(el, setWidth);
  }, [ref]);
  return width;
}

/**
 * Like `useElementWidth`, but known before the browser paints and `null` until then, so
 * a chart draws its canvas once, at its real width, instead of at a guessed width and
 * again after the first measurement. `known` (a width measured by the caller, e.g. the
 * build queue's, use-build-slot.ts) skips the synchronous measurement — reading
 * `clientWidth` right after a DOM change forces a layout of the page; the ResizeObserver
 * corrects it if it was off. A zero width (jsdom, hidden) reads as `fallback`.
 */
export function useBoxWidth(ref: RefObject<HTMLElement | null>, fallback: number, known?: number): number | null {
  const [width, setWidth] = useState<number | null>(known && known > 0 ? known : null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (!(known && known > 0)) {
      const now = Math.floor(el.clientWidth);
      setWidth((prev) => (now > 0 ? now : (prev ?? fallback)));
    }
    return observeWidth(el, setWidth);
    // `known` is read once, at mount: later the observer keeps the width
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ref, fallback]);
  return width;
}

/** Follow `el`'s content width (whole px, > 0) with a ResizeObserver; returns the unsubscribe (a no-op without ResizeObserver). */
function observeWidth<W extends number | null>(el: HTMLElement, setWidth: (f: (prev: W) => W) => void): () => void {
  if (typeof ResizeObserver === "undefined") return () => undefined;
  const ro = new ResizeObserver((entries) => {
    const w = Math.floor(entries[0]?.contentRect.width ?? el.clientWidth);
    if (w > 0) setWidth((prev) => (prev === w ? prev : (w as W)));
  });
  ro.observe(el);
  return () => ro.disconnect();
}
