-- 0003: per-user session generation. Every browser session (JWT) carries the user's id and
-- generation at sign-in; removing the user, changing their password or role, or revoking
-- their tokens bumps it, which ends every session they hold at once.
ALTER TABLE users ADD COLUMN session_gen INTEGER NOT NULL DEFAULT 0;
