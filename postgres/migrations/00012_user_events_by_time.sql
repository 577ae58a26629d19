-- +goose Up
-- A user's journey lists newest first by timestamp, as every list does: its index walks
-- each user's events in that order.
DROP INDEX events_user;
CREATE INDEX events_user ON events (project_id, user_id, ts DESC, id DESC) WHERE user_id <> '';

-- +goose Down
DROP INDEX events_user;
CREATE INDEX events_user ON events (project_id, user_id, id) WHERE user_id <> '';
