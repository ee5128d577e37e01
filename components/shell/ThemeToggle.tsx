"use client";

export function ThemeToggle() {
  return (
    <button
      type="button"
      className="btn"
      aria-label="Toggle dark theme"
      onClick={() => {
        const root = document.documentElement;
        const next = root.dataset.theme === "dark" ? "light" : "dark";
        root.dataset.theme = next;
        try {
          localStorage.setItem("rlboard-theme", next);
        } catch {
          /* private mode: theme lasts for this page only */
        }
      }}
    >
      ◐ Theme
    </button>
  );
}
