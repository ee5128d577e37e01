"use client";

/**
 * Viewport ↔ URL sync of the Compute Utilization view. The viewport moves through a
 * small store at pointer rate (viewport-store.ts); this hook creates it from the URL,
 * lets a pinned viewport trail new data (follow ticks), adopts a window the URL brings
 * (Back/Forward, a pasted link), and once an interaction settles (300 ms) writes the
 * viewport to the URL and re-checks the data window the queries fetch.
 */
import { useEffect, useState } from "react";
import { writeTimelineState, type TimelineUrlState } from "@/lib/charts/timeline-url";
import { clampViewport, covers, fetchWindow, isPinned, latestViewport, span, type Viewport } from "@/lib/charts/timeline-viewport";
import type { Win } from "@/lib/client/telemetry-queries";
import { currentParams, type HistoryMode } from "@/components/charts/use-url-state";
import { createViewportStore, type DataRange, type ViewportStore } from "@/components/timeline/viewport-store";

const SETTLE_MS = 300;

function initialViewport(st: Pick<TimelineUrlState, "viewport" | "span">, r: DataRange): Viewport {
  if (st.viewport) return clampViewport(st.viewport, r.T0, r.T1, r.maxWindow);
  if (st.span) return clampViewport({ v0: r.T1 - st.span, v1: r.T1 }, r.T0, r.T1, r.maxWindow);
  return latestViewport(r.T0, r.T1, r.maxWindow);
}

export interface TimelineViewport {
  store: ViewportStore;
  /** the margin-padded window the lane queries fetch (changes only when the view leaves it) */
  fetched: Win;
  /** the settled viewport (the overview's resolution follows it) */
  settled: Win;
}

export function useTimelineViewport(range: DataRange, st: Pick<TimelineUrlState, "viewport" | "span">, write: (query: string, mode: HistoryMode) => void): TimelineViewport {
  const { T0, T1, maxWindow } = range;
  const [store] = useState(() => createViewportStore(initialViewport(st, range), range));
  const [fetched, setFetched] = useState<Win>(() => {
    const f = fetchWindow(store.get(), T0, T1, maxWindow);
    return { t0: f.v0, t1: f.v1 };
  });
  const [settled, setSettled] = useState<Win>(() => ({ t0: store.get().v0, t1: store.get().v1 }));

  // Sync: new data range (follow tick) → the store (a pinned viewport trails it).
  useEffect(() => store.setRange({ T0, T1, maxWindow }), [store, T0, T1, maxWindow]);

  // Sync: URL window (back/forward, pasted link) → store.
  const urlV0 = st.viewport?.v0;
  const urlV1 = st.viewport?.v1;
  useEffect(() => {
    if (urlV0 === undefined || urlV1 === undefined) return;
    const v = store.get();
    const r = store.range();
    if (Math.abs(v.v0 - urlV0) > 0.05 || Math.abs(v.v1 - urlV1) > 0.05) store.set(clampViewport({ v0: urlV0, v1: urlV1 }, r.T0, r.T1, r.maxWindow));
  }, [urlV0, urlV1, store]);

  // Sync: store → URL + data window, once an interaction settles (external: timers).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const settle = () => {
      const v = store.get();
      const { T0: a, T1: b, maxWindow: mw } = store.range();
      const pinned = isPinned(v, b);
      const full = latestViewport(a, b, mw);
      const isLatest = pinned && Math.abs(span(v) - span(full)) < 1e-3;
      write(writeTimelineState(currentParams(), { viewport: pinned ? null : v, span: pinned && !isLatest ? span(v) : null }), "replace");
      setFetched((prev) => {
        if (covers({ v0: prev.t0, v1: prev.t1 }, v) && !(pinned && prev.t1 < b)) return prev;
        const f = fetchWindow(v, a, b, mw);
        return { t0: f.v0, t1: f.v1 };
      });
      setSettled((prev) => (prev.t0 === v.v0 && prev.t1 === v.v1 ? prev : { t0: v.v0, t1: v.v1 }));
    };
    const unsub = store.subscribe(() => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(settle, SETTLE_MS);
    });
    return () => {
      unsub();
      if (timer) clearTimeout(timer);
    };
  }, [store, write]);

  return { store, fetched, settled };
}
