"use client";

/**
 * The active theme for canvas drawing. Canvas cannot read CSS variables, so the colours
 * are resolved here from the document's computed style, and the hook re-renders its
 * users when `<html data-theme>` flips (external system: the theme toggle's attribute).
 */
import { useMemo, useSyncExternalStore } from "react";
import type { ThemeName } from "@/lib/charts/palette";

/** The monospace stack of canvas text (the CSS `--mono` where set). */
export const MONO_FONT = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace';

export interface ChartTheme {
  name: ThemeName;
  dark: boolean;
  text: string;
  muted: string;
  border: string;
  panel: string;
  panel2: string;
  bg: string;
  accent: string;
  bad: string;
  warn: string;
  /** font family of canvas text */
  mono: string;
  /** 11px canvas font */
  font: string;
}

function subscribe(onChange: () => void): () => void {
  const obs = new MutationObserver(onChange);
  obs.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  return () => obs.disconnect();
}

function snapshot(): ThemeName {
  return document.documentElement.dataset.theme === "dark" ? "dark" : "light";
}

function serverSnapshot(): ThemeName {
  return "light";
}

export function useThemeName(): ThemeName {
  return useSyncExternalStore(subscribe, snapshot, serverSnapshot);
}

export function useChartTheme(): ChartTheme {
  const name = useThemeName();
  return useMemo(() => {
    const fallback: ChartTheme = {
      name,
      dark: name === "dark",
      text: name === "dark" ? "#ece7df" : "#1f1d1a",
      muted: name === "dark" ? "#a39b8e" : "#6d665c",
      border: name === "dark" ? "#38332b" : "#e4ded5",
      panel: name === "dark" ? "#1e1c18" : "#ffffff",
      panel2: name === "dark" ? "#26231e" : "#f2efea",
      bg: name === "dark" ? "#15140f" : "#f8f6f3",
      accent: name === "dark" ? "#f0804a" : "#c8541c",
      bad: name === "dark" ? "#f07070" : "#c53030",
      warn: name === "dark" ? "#e3b04b" : "#b7791f",
      mono: MONO_FONT,
      font: `11px ${MONO_FONT}`,
    };
    if (typeof window === "undefined") return fallback;
    const cs = getComputedStyle(document.documentElement);
    const v = (n: string, d: string) => cs.getPropertyValue(n).trim() || d;
    const mono = v("--mono", MONO_FONT);
    return {
      name,
      dark: name === "dark",
      text: v("--text", fallback.text),
      muted: v("--muted", fallback.muted),
      border: v("--border", fallback.border),
      panel: v("--panel", fallback.panel),
      panel2: v("--panel-2", fallback.panel2),
      bg: v("--bg", fallback.bg),
      accent: v("--accent", fallback.accent),
      bad: v("--bad", fallback.bad),
      warn: v("--warn", fallback.warn),
      mono,
      font: `11px ${mono}`,
    };
  }, [name]);
}
