-- +goose Up
-- An event's seq is never given twice: the last one given is kept here, and the next
-- event takes the one after it, whatever was deleted since (SQLite's own rowid would be
-- max(seq) + 1 and reuse the seq of a deleted newest event, and with it any index row
-- that outlived that event).
CREATE TABLE event_seq (last INTEGER NOT NULL);
INSERT INTO event_seq SELECT coalesce(max(seq), 0) FROM events;

-- Repair what the race between a retention purge and backdated events of the same
-- batch could leave (fixed in the same release): rows of the tag index that do not
-- match their event, counts that do not match the events, and a full-text index with
-- rows of deleted events (then it is rebuilt at start, newest events first).
DELETE FROM event_tags WHERE NOT EXISTS (
    SELECT 1 FROM events e JOIN tags g ON g.id = event_tags.tag_id
    WHERE e.seq = event_tags.seq AND e.project_id = g.project_id AND e.ts = event_tags.ts
      AND e.channel_id = event_tags.channel_id
      AND EXISTS (SELECT 1 FROM json_each(e.tags) j WHERE j.key = g.key AND (
          j.type = 'text' AND j.value = g.value
          OR j.type IN ('integer', 'real') AND CAST(g.value AS REAL) = j.value
          OR j.type IN ('true', 'false') AND j.type = g.value)));
UPDATE tags SET count = (SELECT count(*) FROM event_tags WHERE tag_id = tags.id);
DELETE FROM event_counts;
INSERT INTO event_counts (channel_id, hour, n)
    SELECT channel_id, ts - ts % 3600000, count(*) FROM events GROUP BY 1, 2;
INSERT INTO people (project_id, user_id, first_seen, last_seen, events)
    SELECT project_id, user_id, min(created_at), max(created_at), count(*) FROM events WHERE user_id != '' GROUP BY 1, 2
    ON CONFLICT (project_id, user_id) DO UPDATE SET events = excluded.events,
        first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen);
UPDATE people SET events = 0 WHERE events != 0
    AND NOT EXISTS (SELECT 1 FROM events e WHERE e.project_id = people.project_id AND e.user_id = people.user_id);

CREATE TEMP TABLE reindex AS SELECT (SELECT count(*) FROM events_fts_docsize d
    WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = d.id)) > 0 AS needed;
INSERT INTO events_fts (events_fts) SELECT 'delete-all' FROM reindex WHERE needed;
UPDATE search_backfill SET next_seq = (SELECT coalesce(max(seq), 0) FROM events) WHERE (SELECT needed FROM reindex);
DROP TABLE reindex;

-- A deleted event's pending deliveries go with it.
CREATE INDEX deliveries_event ON deliveries (event_id) WHERE event_id != '';

-- +goose Down
DROP INDEX deliveries_event;
DROP TABLE event_seq;
