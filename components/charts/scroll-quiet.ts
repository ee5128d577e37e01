"use client";

/**
 * Chart cards take no pointer events while the page scrolls (docs/charts.md §7).
 *
 * A wheel scroll moves cards under a pointer that stays put, so the browser hit-tests and
 * sends pointerover / pointerout (and React its enter/leave handling) for every card that
 * passes under it, and a chart's hover picks a point and redraws its crosshair — work that
 * lands in the scroll's frames (the 200-metric page: ~180 such transitions a scroll, up to
 * 3.6 ms each). While the page scrolls, and SCROLL_QUIET_MS after its last scroll event,
 * `<html data-scrolling>` is set and chart.css turns pointer events off on `.chart-card`;
 * hover resumes with the next pointer move after that. Cards are not scroll containers, so
 * a wheel over one still scrolls the page.
 *
 * External system: the window's scroll events. One passive listener for the whole page,
 * held while any card is mounted.
 */
import { useEffect } from "react";

export const SCROLL_QUIET_MS = 150;

let users = 0;
let timer: ReturnType<typeof setTimeout> | null = null;

function quiet(): void {
  document.documentElement.removeAttribute("data-scrolling");
  timer = null;
}

function onScroll(): void {
  if (timer === null) document.documentElement.setAttribute("data-scrolling", "");
  else clearTimeout(timer);
  timer = setTimeout(quiet, SCROLL_QUIET_MS);
}

/** Hold the page's scroll listener while the calling card is mounted. */
export function useQuietWhileScrolling(): void {
  useEffect(() => {
    if (users++ === 0) window.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      if (--users > 0) return;
      window.removeEventListener("scroll", onScroll);
      if (timer !== null) clearTimeout(timer);
      quiet();
    };
  }, []);
}
