"use client";

import { useEffect } from "react";

const KEY = "rlboard-theme";

/** The saved theme, else the system's preference (the same rule as the pre-paint script in app/layout.tsx). */
function preferredTheme(): "dark" | "light" {
  try {
    const saved = localStorage.getItem(KEY);
    if (saved === "dark" || saved === "light") return saved;
  } catch {
    /* private mode */
  }
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function ThemeToggle() {
  // External system (the document element): if anything re-rendered <html> without the
  // theme the pre-paint script set, put it back, so the page never flips and one click
  // always toggles what is shown (#15 defect 2).
  useEffect(() => {
    const root = document.documentElement;
    if (!root.dataset.theme) root.dataset.theme = preferredTheme();
  }, []);
  return (
    <button
      type="button"
      className="btn"
      aria-label="Toggle dark theme"
      onClick={() => {
        const root = document.documentElement;
        const shown = root.dataset.theme === "dark" || root.dataset.theme === "light" ? root.dataset.theme : preferredTheme();
        const next = shown === "dark" ? "light" : "dark";
        root.dataset.theme = next;
        try {
          localStorage.setItem(KEY, next);
        } catch {
          /* private mode: theme lasts for this page only */
        }
      }}
    >
      ◐ Theme
    </button>
  );
}
