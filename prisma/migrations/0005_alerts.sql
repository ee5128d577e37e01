-- 0005: per-run alert mutes (docs/api.md 9.5.5). A muted run posts no webhook alerts;
-- episodes are still tracked so unmuting does not replay what already fired.
CREATE TABLE alert_mutes (
  run_id   TEXT PRIMARY KEY,
  muted_by TEXT NOT NULL,
  muted_at REAL NOT NULL
);
