-- +goose Up
-- Full-text search: each event's words (name, description, tag values), folded in Go
-- (lower case, no accents) and indexed as a tsvector with a GIN index. The events
-- stored before this migration are indexed after it, newest first, in chunks
-- (backfillSearch): events with id < next_id are still to index.
ALTER TABLE events ADD COLUMN search tsvector;
CREATE INDEX events_search ON events USING gin (search);
CREATE TABLE search_backfill (next_id TEXT NOT NULL);
INSERT INTO search_backfill SELECT CASE WHEN EXISTS (SELECT 1 FROM events) THEN 'g' ELSE '' END;

-- +goose Down
DROP TABLE search_backfill;
DROP INDEX events_search;
ALTER TABLE events DROP COLUMN search;
