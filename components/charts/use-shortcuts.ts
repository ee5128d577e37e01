"use client";

/**
 * The one keyboard-shortcut hook (external system: the window's keydown). Keys typed into
 * a field, and chords with Ctrl/⌘/Alt, never reach a view's handler. The handler always
 * sees the current render's values (an effect event), so views pass a plain function;
 * it returns true when it handled the key, which then does nothing else (no scroll on
 * arrows, no browser find on `/`).
 */
import { useEffect, useEffectEvent } from "react";

export function isTyping(el: EventTarget | null): boolean {
  return el instanceof HTMLElement && (el.isContentEditable || el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
}

export function useShortcuts(handler: (e: KeyboardEvent) => boolean): void {
  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
    if (handler(e)) e.preventDefault();
  });
  useEffect(() => {
    const listener = (e: KeyboardEvent) => onKey(e);
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, []);
}
