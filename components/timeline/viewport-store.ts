"use client";

/**
 * The timeline viewport as a tiny external store. Pan and zoom change it at pointer rate;
 * canvases subscribe and redraw in the next animation frame without a React render, and
 * only the small components that print the window (axis, labels) re-render. The URL gets
 * the settled viewport after the interaction (see use-timeline-viewport.ts).
 *
 * The store also holds the data range the viewport lives in, so handlers (keys, steps,
 * the settle timer) read the current one without a ref written during render.
 */
import { useSyncExternalStore } from "react";
import { followViewport, type Viewport } from "@/lib/charts/timeline-viewport";

export interface DataRange {
  T0: number;
  T1: number;
  maxWindow: number;
}

export interface ViewportStore {
  get: () => Viewport;
  set: (v: Viewport) => void;
  subscribe: (fn: () => void) => () => void;
  range: () => DataRange;
  /** A new data range (follow tick): a viewport pinned to the newest data trails it. */
  setRange: (r: DataRange) => void;
}

export function createViewportStore(initial: Viewport, range: DataRange): ViewportStore {
  let cur = initial;
  let data = range;
  const subs = new Set<() => void>();
  const set = (v: Viewport) => {
    if (v.v0 === cur.v0 && v.v1 === cur.v1) return;
    cur = v;
    for (const fn of subs) fn();
  };
  return {
    range: () => data,
    setRange: (r) => {
      if (r.T0 === data.T0 && r.T1 === data.T1 && r.maxWindow === data.maxWindow) return;
      const prevT1 = data.T1;
      data = r;
      set(followViewport(cur, prevT1, r.T0, r.T1, r.maxWindow));
    },
    get: () => cur,
    set,
    subscribe: (fn) => {
      subs.add(fn);
      return () => subs.delete(fn);
    },
  };
}

export function useViewport(store: ViewportStore): Viewport {
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}

/** Geometry shared by every time-aligned panel (carpet, fleet, steps, lanes). */
export const TIME_MARGIN = { left: 96, right: 14 };

export function timeToX(t: number, v: Viewport, width: number): number {
  const w = Math.max(1, width - TIME_MARGIN.left - TIME_MARGIN.right);
  return TIME_MARGIN.left + ((t - v.v0) / (v.v1 - v.v0)) * w;
}

export function xToTime(x: number, v: Viewport, width: number): number {
  const w = Math.max(1, width - TIME_MARGIN.left - TIME_MARGIN.right);
  return v.v0 + ((x - TIME_MARGIN.left) / w) * (v.v1 - v.v0);
}

/** Run `draw` in the next animation frame whenever the viewport changes (coalesced). */
export function subscribeFrames(store: ViewportStore, draw: () => void): () => void {
  let raf = 0;
  const unsub = store.subscribe(() => {
    if (raf) return;
    raf = requestAnimationFrame(() => {
      raf = 0;
      draw();
    });
  });
  return () => {
    unsub();
    if (raf) cancelAnimationFrame(raf);
  };
}
