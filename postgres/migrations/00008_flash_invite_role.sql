-- +goose Up
-- A session's flash: what its next page shows once (a token just made), sealed with a
-- key only the session's cookie gives. The role an invitation grants.
ALTER TABLE sessions ADD COLUMN flash BYTEA;
ALTER TABLE invites ADD COLUMN role TEXT NOT NULL DEFAULT 'member';

-- +goose Down
ALTER TABLE invites DROP COLUMN role;
ALTER TABLE sessions DROP COLUMN flash;
