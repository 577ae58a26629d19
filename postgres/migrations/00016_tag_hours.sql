-- +goose Up
-- The events of each common tag per UTC hour, so that a chart of a tag, or split by a
-- tag's values, reads a few rows an hour instead of the tag's millions of events. A
-- tag (project, key, value) is rolled once it has had tidings.TagRollup (10,000)
-- events: the batch that takes it there fills its rows from event_tags and sets
-- tag_counts.rolled; from then on every batch adds its events to them and every
-- deletion takes its events off (a row of 0 is deleted). A rolled tag stays rolled.
-- A tag that is not rolled has no rows: its events are few, read from event_tags.
--
-- On a large store this migration takes a while: it reads the event_tags rows of
-- every tag that already has 10,000 events or more (at 10 million events, minutes).
ALTER TABLE tag_counts ADD COLUMN rolled BOOLEAN NOT NULL DEFAULT false;
CREATE TABLE tag_hours (
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key        TEXT   NOT NULL,
    value      TEXT   NOT NULL,
    hour       BIGINT NOT NULL, -- unix ms of the hour's start
    n          BIGINT NOT NULL,
    PRIMARY KEY (project_id, key, value, hour)
);
UPDATE tag_counts SET rolled = true WHERE n >= 10000;
INSERT INTO tag_hours (project_id, key, value, hour, n)
  SELECT t.project_id, t.key, t.value, t.ts - t.ts % 3600000, count(*)
  FROM event_tags t JOIN tag_counts c ON c.project_id = t.project_id AND c.key = t.key AND c.value = t.value
  WHERE c.rolled
  GROUP BY 1, 2, 3, 4;
ANALYZE tag_counts;
ANALYZE tag_hours;

-- +goose Down
DROP TABLE tag_hours;
ALTER TABLE tag_counts DROP COLUMN rolled;
