-- +goose Up
-- When a member hid the dashboard's getting-started checklist (unix ms; 0: shown while
-- steps remain). A column of users, so that removing a member takes it with them.
ALTER TABLE users ADD COLUMN checklist_hidden_at INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE users DROP COLUMN checklist_hidden_at;
