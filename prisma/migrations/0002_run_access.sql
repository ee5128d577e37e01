-- 0002: restricted runs. A restricted run's trajectories (messages, tokens) are visible
-- only to admins and to the users listed in run_members.
CREATE TABLE run_restrictions (
  run_id     TEXT PRIMARY KEY,
  created_at REAL NOT NULL
);
CREATE TABLE run_members (
  run_id  TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY (run_id, user_id)
);
