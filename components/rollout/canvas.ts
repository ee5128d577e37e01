"use client";
/**
 * What the rollout canvases add to components/charts (prepareCanvas, useElementWidth,
 * useThemeName): the active theme's colours read from the CSS variables, and the mono
 * font.
 */

export interface ThemeColors {
  text: string;
  muted: string;
  border: string;
  panel: string;
  panel2: string;
  bg: string;
  accent: string;
  bad: string;
  dark: boolean;
}

const FALLBACK: ThemeColors = {
  text: "#1f1d1a",
  muted: "#6d665c",
  border: "#e4ded5",
  panel: "#ffffff",
  panel2: "#f2efea",
  bg: "#f8f6f3",
  accent: "#c8541c",
  bad: "#c53030",
  dark: false,
};

export function readThemeColors(el: Element | null): ThemeColors {
  if (!el || typeof getComputedStyle === "undefined") return FALLBACK;
  const cs = getComputedStyle(el);
  const v = (name: string, fb: string) => cs.getPropertyValue(name).trim() || fb;
  return {
    text: v("--text", FALLBACK.text),
    muted: v("--muted", FALLBACK.muted),
    border: v("--border", FALLBACK.border),
    panel: v("--panel", FALLBACK.panel),
    panel2: v("--panel-2", FALLBACK.panel2),
    bg: v("--bg", FALLBACK.bg),
    accent: v("--accent", FALLBACK.accent),
    bad: v("--bad", FALLBACK.bad),
    dark: document.documentElement.dataset.theme === "dark",
  };
}

export const MONO_FONT = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace';
