-- +goose Up
-- A tag filter reads the feed from the tag's own rows, newest first: each row of
-- event_tags carries its event's project, channel and timestamp, and one index orders
-- them as the feed does. tag_counts (kept by every batch) tells which of a filter's
-- tags, or its channel, has the fewest events, so that the page is read from there.
-- The rows are copied into a new table (faster than updating them in place on a large
-- store), which then replaces the old one.
CREATE TABLE event_tags_new (
    event_id   TEXT   NOT NULL,
    key        TEXT   NOT NULL,
    value      TEXT   NOT NULL,
    project_id BIGINT NOT NULL,
    channel_id BIGINT NOT NULL,
    ts         BIGINT NOT NULL
);
INSERT INTO event_tags_new (event_id, key, value, project_id, channel_id, ts)
  SELECT t.event_id, t.key, t.value, e.project_id, e.channel_id, e.ts
  FROM event_tags t JOIN events e ON e.id = t.event_id;
DROP TABLE event_tags;
ALTER TABLE event_tags_new RENAME TO event_tags;
ALTER TABLE event_tags ADD CONSTRAINT event_tags_pkey PRIMARY KEY (event_id, key);
ALTER TABLE event_tags ADD CONSTRAINT event_tags_event_id_fkey
  FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE;
CREATE INDEX event_tags_feed ON event_tags (project_id, key, value, ts DESC, event_id DESC) INCLUDE (channel_id);

CREATE TABLE tag_counts (
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key        TEXT   NOT NULL,
    value      TEXT   NOT NULL,
    n          BIGINT NOT NULL,
    PRIMARY KEY (project_id, key, value)
);
INSERT INTO tag_counts (project_id, key, value, n)
  SELECT project_id, key, value, count(*) FROM event_tags GROUP BY 1, 2, 3;

-- Statistics for the new table, so that the planner knows its size at once.
ANALYZE events;
ANALYZE event_tags;
ANALYZE tag_counts;

-- +goose Down
DROP TABLE tag_counts;
DROP INDEX event_tags_feed;
CREATE INDEX event_tags_kv ON event_tags (key, value, event_id);
ALTER TABLE event_tags DROP COLUMN project_id, DROP COLUMN channel_id, DROP COLUMN ts;
