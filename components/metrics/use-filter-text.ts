"use client";

/**
 * The Metrics filter box: it keeps its own text so polls and URL writes never wipe what
 * is being typed; the URL gets the text 200 ms after the last key. Back/Forward changing
 * the filter in the URL is adopted, unless the user is mid-typing.
 */
import { useEffect, useRef, useState } from "react";

const DEBOUNCE_MS = 200;

export function useFilterText(urlValue: string, commit: (v: string) => void): [string, (v: string) => void] {
  const [text, setText] = useState(urlValue);
  const [typing, setTyping] = useState(false);
  const [seen, setSeen] = useState(urlValue);
  if (urlValue !== seen) {
    setSeen(urlValue);
    if (!typing && text !== urlValue) setText(urlValue);
  }
  // External system: the debounce timer (touched by handlers and the unmount cleanup only).
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const onChange = (v: string) => {
    setText(v);
    setTyping(true);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      setTyping(false);
      commit(v);
    }, DEBOUNCE_MS);
  };
  return [text, onChange];
}
