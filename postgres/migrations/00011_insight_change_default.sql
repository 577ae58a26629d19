-- +goose Up
-- What an insight update without "change" means for the project: '' (it is refused, as
-- the spec says) or 'update' (what the LogSnag SDKs' insight.track means).
ALTER TABLE projects ADD COLUMN insight_change_default TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE projects DROP COLUMN insight_change_default;
