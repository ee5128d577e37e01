"use client";

import { useEffect, useState, type RefObject } from "react";

/** Width of an element in CSS px, kept current by a ResizeObserver (external system: layout). */
export function useElementWidth(ref: RefObject<HTMLElement | null>, initial = 0): number {
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(Math.floor(el.clientWidth));
    const ro = new ResizeObserver((entries) => {
      const w = Math.floor(entries[0]?.contentRect.width ?? el.clientWidth);
      setWidth((prev) => (prev === w ? prev : w));
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}
