"use client";

/**
 * Only on-screen charts fetch and draw (docs/charts.md §7). One IntersectionObserver per
 * margin is shared by every card of a page; a card learns whether it is near the viewport
 * (`near`: within the margin now; its query is `enabled` only then, so a far-away live
 * chart stops polling) and whether it ever was (`seen`: it keeps its canvas and data once
 * drawn, so scrolling back costs nothing).
 *
 * External system: the browser's layout. Without IntersectionObserver (jsdom, old
 * browsers) every card counts as near.
 */
import { useEffect, useState, useSyncExternalStore, type RefObject } from "react";

/** How far outside the viewport a chart starts fetching and drawing. */
export const NEAR_MARGIN_PX = 300;

type Listener = (near: boolean) => void;

interface Shared {
  io: IntersectionObserver;
  listeners: Map<Element, Listener>;
}

const observers = new Map<number, Shared>();

function shared(margin: number): Shared | null {
  if (typeof IntersectionObserver === "undefined") return null;
  let s = observers.get(margin);
  if (!s) {
    const listeners = new Map<Element, Listener>();
    const io = new IntersectionObserver(
      (entries) => {
        for (const e of entries) listeners.get(e.target)?.(e.isIntersecting);
      },
      { rootMargin: `${margin}px 0px ${margin}px 0px` },
    );
    s = { io, listeners };
    observers.set(margin, s);
  }
  return s;
}

export interface NearState {
  near: boolean;
  seen: boolean;
}

const noSubscribe = () => () => {};
const ALWAYS_NEAR: NearState = { near: true, seen: true };

export function useNearViewport(ref: RefObject<Element | null>, margin = NEAR_MARGIN_PX): NearState {
  // The server render and the hydration both start "not near" (the server has no
  // IntersectionObserver: deciding there made the server's card differ from the browser's,
  // React's hydration error #418, which re-rendered the page and dropped the theme, #15).
  const noObserver = useSyncExternalStore(noSubscribe, () => typeof IntersectionObserver === "undefined", () => false);
  const [state, setState] = useState<NearState>({ near: false, seen: false });
  useEffect(() => {
    const el = ref.current;
    const s = shared(margin);
    if (!el || !s) return;
    s.listeners.set(el, (near) => setState((p) => (p.near === near && (p.seen || !near) ? p : { near, seen: p.seen || near })));
    s.io.observe(el);
    return () => {
      s.io.unobserve(el);
      s.listeners.delete(el);
    };
  }, [ref, margin]);
  return noObserver ? ALWAYS_NEAR : state;
}
