-- +goose Up
-- Full-text search: one row per event, its rowid the event's seq. text is the event's
-- name, description and tag values, folded by the tokenizer (case, accents); scope
-- holds tokens for its project, channel and tags (p7 c12 t40), so that a search's
-- filters are part of the full-text query. Contentless: the words are indexed, not
-- stored again; contentless_delete lets a deleted event's row go.
CREATE VIRTUAL TABLE events_fts USING fts5(text, scope, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2');
-- A deleted event (with its channel, project, or one at a time) leaves the index too.
-- +goose StatementBegin
CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_fts WHERE rowid = old.seq;
END;
-- +goose StatementEnd
-- The events stored before this migration are indexed after it, newest first, in
-- chunks (backfillSearch): events with seq <= next_seq are still to index.
CREATE TABLE search_backfill (next_seq INTEGER NOT NULL);
INSERT INTO search_backfill SELECT coalesce(max(seq), 0) FROM events;

-- +goose Down
DROP TABLE search_backfill;
DROP TRIGGER events_fts_delete;
DROP TABLE events_fts;
