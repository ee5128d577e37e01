"use client";

/**
 * A chart's turn in the page's build queue (docs/charts.md §7, lib/charts/build-queue.ts):
 * `ready` (its data is here) queues the card; at its turn, right after a frame, the hook
 * returns the chart's width inside `flushSync`, so the card's render, commit and canvas
 * draw happen right there and their time counts against the frame's budget. Cards
 * on screen go first, top to bottom; the others by their distance from the viewport.
 * Once built, a card stays built (a poll repaints it directly).
 *
 * The width is the placeholder's (`[data-testid="chart"]` inside the card, the box the
 * chart will fill), read with the priorities before any build of that frame has changed
 * the page: a chart measuring itself after another was built in
 * the same frame would force a layout per card.
 *
 * External system: the browser's frames and layout. Without requestAnimationFrame (jsdom)
 * a ready card is built at once.
 */
import { useEffect, useState, type RefObject } from "react";
import { flushSync } from "react-dom";
import { createBuildQueue, viewportPriority, type BuildQueue } from "@/lib/charts/build-queue";

/** Main-thread time per frame for building charts: under half a 60 Hz frame, the rest is the browser's. */
export const BUILD_BUDGET_MS = 4;

let queue: BuildQueue | null = null;

/**
 * Run `cb` right after the next frame is produced: a task posted from an animation-frame
 * callback runs once the browser has rendered that frame, so the builds fill the gap
 * before the next one instead of lengthening the frame itself (scrolling stays smooth).
 */
function afterNextFrame(): (cb: () => void) => void {
  const ch = new MessageChannel();
  let pending: (() => void)[] = [];
  ch.port1.onmessage = () => {
    const run = pending;
    pending = [];
    for (const cb of run) cb();
  };
  return (cb) => {
    pending.push(cb);
    if (pending.length === 1) window.requestAnimationFrame(() => ch.port2.postMessage(0));
  };
}

function pageQueue(): BuildQueue | null {
  if (typeof window === "undefined" || typeof window.requestAnimationFrame !== "function" || typeof MessageChannel === "undefined") return null;
  queue ??= createBuildQueue({ now: () => performance.now(), requestFrame: afterNextFrame() }, { budgetMs: BUILD_BUDGET_MS });
  return queue;
}

/** The built state: `false` while waiting, then the chart box's width (CSS px; 0 when unknown). */
export type BuildSlot = false | number;

export function useBuildSlot(ref: RefObject<Element | null>, ready: boolean): BuildSlot {
  const [built, setBuilt] = useState<BuildSlot>(false);
  useEffect(() => {
    if (built !== false || !ready) return;
    const q = pageQueue();
    if (!q) {
      // no frames to spread over (jsdom)
      queueMicrotask(() => setBuilt(0));
      return;
    }
    let width = 0;
    return q.enqueue({
      priority: () => {
        const el = ref.current;
        if (!el) return Number.MAX_SAFE_INTEGER;
        width = Math.floor(el.querySelector('[data-testid="chart"]')?.getBoundingClientRect().width ?? 0);
        return viewportPriority(el.getBoundingClientRect(), window.innerHeight);
      },
      run: () => flushSync(() => setBuilt(width)),
    });
  }, [built, ready, ref]);
  return built;
}
