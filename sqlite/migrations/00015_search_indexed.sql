-- +goose Up
-- The full-text index trails the events (indexer.go): a publish commits its event, and
-- the indexer adds it to events_fts a moment later, many events per transaction.
-- seq is the watermark: every event with search_backfill.next_seq < seq <= this has its
-- row in events_fts, and no event above it has one. Every event stored so far was
-- indexed in its own batch (or is the backfill's), so the watermark starts at the last.
CREATE TABLE search_indexed (seq INTEGER NOT NULL);
INSERT INTO search_indexed SELECT last FROM event_seq;

-- +goose Down
DROP TABLE search_indexed;
