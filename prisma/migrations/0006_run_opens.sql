-- 0006: when a run was last opened by a signed-in user or token (API request or run page).
-- Which runs, never who: a server restart warms these first (lib/server/warmup.ts).
-- Kept to the newest 64 rows by lib/server/runs/recent.ts.
CREATE TABLE run_opens (
  run_id    TEXT PRIMARY KEY,
  opened_at REAL NOT NULL
);
