"use client";
/**
 * Small helpers shared by the rollout canvases: element size (ResizeObserver), the
 * active theme's colours (CSS variables, re-read when the theme attribute flips) and a
 * devicePixelRatio-correct 2D context.
 */
import { useEffect, useState, useSyncExternalStore, type RefObject } from "react";

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

function subscribeTheme(cb: () => void): () => void {
  const obs = new MutationObserver(cb);
  obs.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  return () => obs.disconnect();
}
const themeSnapshot = () => document.documentElement.dataset.theme ?? "light";
const themeServerSnapshot = () => "light";

/** The theme name; components that draw on canvas use it as a redraw dependency. */
export function useThemeName(): string {
  return useSyncExternalStore(subscribeTheme, themeSnapshot, themeServerSnapshot);
}

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

/** Content-box width of an element, kept current by a ResizeObserver. */
export function useElementWidth(ref: RefObject<HTMLElement | null>, fallback = 800): number {
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      if (w && w > 0) setWidth(Math.floor(w));
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}

/** Size the canvas bitmap for the device pixel ratio and return a context in CSS pixels. */
export function prepareCanvas(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D | null {
  const dpr = typeof window === "undefined" ? 1 : window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  let ctx: CanvasRenderingContext2D | null = null;
  try {
    ctx = canvas.getContext("2d");
  } catch {
    ctx = null; // jsdom without a canvas backend
  }
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

export const MONO_FONT = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace';
