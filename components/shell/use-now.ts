"use client";

/**
 * The wall clock for "N s ago" texts, ticking once a second — and null while the server
 * renders and while the page hydrates. A time-derived text rendered on the server never
 * matches the browser's (a second later, another time zone), and React's hydration error
 * #418 then re-renders the whole document, which also drops the theme (#15 defect 2).
 * Components show a time-free text while this is null.
 */
import { useSyncExternalStore } from "react";

let nowS = 0;
let timer: ReturnType<typeof setInterval> | null = null;
const subscribers = new Set<() => void>();

function tick(): void {
  nowS = Date.now() / 1000;
  for (const fn of subscribers) fn();
}

function subscribe(fn: () => void): () => void {
  subscribers.add(fn);
  if (timer === null) {
    nowS = Date.now() / 1000;
    timer = setInterval(tick, 1000);
  }
  return () => {
    subscribers.delete(fn);
    if (subscribers.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

function snapshot(): number {
  if (nowS === 0) nowS = Date.now() / 1000;
  return nowS;
}

const serverSnapshot = () => null;

/** Unix seconds, updated every second; null on the server and during hydration. */
export function useNowS(): number | null {
  return useSyncExternalStore(subscribe, snapshot, serverSnapshot);
}
