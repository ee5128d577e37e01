"use client";

/**
 * Keyboard of the Compute Utilization view: `[` `]` previous/next step, Esc the latest
 * window, +/− zoom around the centre, ←/→ pan (while the lanes have focus).
 */
import { neighbourStep, type StepSpan } from "@/lib/charts/prepare-bubbles";
import { parseTimelineState } from "@/lib/charts/timeline-url";
import { panBy, span, zoomAround } from "@/lib/charts/timeline-viewport";
import { useShortcuts } from "@/components/charts/use-shortcuts";
import { currentParams } from "@/components/charts/use-url-state";
import type { ViewportStore } from "@/components/timeline/viewport-store";

export function useTimelineKeys(store: ViewportStore, steps: readonly StepSpan[], goStep: (s: StepSpan) => void, latest: () => void): void {
  useShortcuts((e) => {
    const v = store.get();
    const { T0: a, T1: b, maxWindow } = store.range();
    const centre = (v.v0 + v.v1) / 2;
    if (e.key === "[" || e.key === "]") {
      // the address bar, not the last render: two quick key presses must both count
      const s = neighbourStep(steps, parseTimelineState(currentParams()).step, centre, e.key === "]" ? 1 : -1);
      if (s) goStep(s);
    } else if (e.key === "Escape") latest();
    else if (e.key === "+" || e.key === "=") store.set(zoomAround(v, centre, 0.5, a, b, maxWindow));
    else if (e.key === "-" || e.key === "_") store.set(zoomAround(v, centre, 2, a, b, maxWindow));
    else if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && e.target instanceof Element && e.target.closest(".lanes-box")) store.set(panBy(v, (e.key === "ArrowLeft" ? -0.2 : 0.2) * span(v), a, b));
    else return false;
    return true;
  });
}
