-- +goose Up
-- A password reset link is an invitation bound to an existing user: used once, it sets
-- that user's password.
ALTER TABLE invites ADD COLUMN user_id INTEGER REFERENCES users(id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE invites DROP COLUMN user_id;
