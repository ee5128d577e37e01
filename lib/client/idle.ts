"use client";
import { useEffect, useState } from "react";

/**
 * False until the browser is first idle after mount (at most `timeoutMs`): secondary
 * panels (the run header's state and advisories) gate their requests on it, so the view's
 * own answers take the page's six HTTP/1.1 connections first and draw first.
 */
export function useAfterFirstIdle(timeoutMs = 1500): boolean {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    if (ready) return;
    const w = window as Window & { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number; cancelIdleCallback?: (h: number) => void };
    if (w.requestIdleCallback && w.cancelIdleCallback) {
      const h = w.requestIdleCallback(() => setReady(true), { timeout: timeoutMs });
      return () => w.cancelIdleCallback?.(h);
    }
    const t = setTimeout(() => setReady(true), Math.min(timeoutMs, 200));
    return () => clearTimeout(t);
  }, [ready, timeoutMs]);
  return ready;
}
