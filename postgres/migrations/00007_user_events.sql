-- +goose Up
-- A user's journey: the events sent with its user_id, newest first by arrival.
CREATE INDEX events_user ON events (project_id, user_id, id) WHERE user_id <> '';

-- +goose Down
DROP INDEX events_user;
