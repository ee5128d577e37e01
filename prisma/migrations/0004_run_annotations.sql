-- 0004: run tags and notes, edited by members on the run list (never written to the run dir).
-- tags: a JSON array of strings; updated_by: the user name of the last edit.
CREATE TABLE run_annotations (
  run_id     TEXT PRIMARY KEY,
  tags       TEXT NOT NULL DEFAULT '[]',
  notes      TEXT NOT NULL DEFAULT '',
  updated_by TEXT NOT NULL,
  updated_at REAL NOT NULL
);
