"use client";

import { useEffect, useState, type RefObject } from "react";

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
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver((entries) => {
      const w = Math.floor(entries[0]?.contentRect.width ?? el.clientWidth);
      if (w > 0) setWidth((prev) => (prev === w ? prev : w));
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}
