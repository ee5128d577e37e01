-- 0001: users, API tokens, login lockout, run index, trajectory audit.
CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT,                       -- scrypt$N$r$p$salt$hash; NULL for OIDC-only users
  role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  provider      TEXT NOT NULL DEFAULT 'credentials',
  created_at    REAL NOT NULL
);

CREATE TABLE api_tokens (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash   TEXT NOT NULL UNIQUE,        -- sha256 hex of the full token; the token itself is never stored
  prefix       TEXT NOT NULL,               -- first chars, shown in listings
  created_at   REAL NOT NULL,
  last_used_at REAL,
  revoked_at   REAL
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE login_failures (
  key          TEXT PRIMARY KEY,            -- lower(user name) || '|' || client ip
  failures     INTEGER NOT NULL,
  first_at     REAL NOT NULL,
  locked_until REAL
);

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,        -- URL-safe id (relative path, '/' written as '~')
  root             TEXT NOT NULL,
  rel_path         TEXT NOT NULL,
  name             TEXT NOT NULL,
  first_ts         REAL,
  last_ts          REAL,
  steps            INTEGER NOT NULL DEFAULT 0,
  has_timeline     INTEGER NOT NULL DEFAULT 0,
  has_dumps        INTEGER NOT NULL DEFAULT 0,
  has_trajectories INTEGER NOT NULL DEFAULT 0,
  live             INTEGER NOT NULL DEFAULT 0,
  seen_at          REAL NOT NULL
);

CREATE TABLE trajectory_audit (
  id        INTEGER PRIMARY KEY,
  user_name TEXT NOT NULL,
  run_id    TEXT NOT NULL,
  step      INTEGER NOT NULL,
  sample    INTEGER NOT NULL,
  kind      TEXT NOT NULL CHECK (kind IN ('messages', 'tokens')),
  at        REAL NOT NULL
);
CREATE INDEX trajectory_audit_at ON trajectory_audit(at);
