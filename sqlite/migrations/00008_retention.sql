-- +goose Up
-- How many days a project keeps its events (by timestamp); 0 keeps them forever.
ALTER TABLE projects ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE projects DROP COLUMN retention_days;
