-- +goose Up
-- The hourly counts of common tags (issue 36): for every tag of the dictionary that has
-- had at least tidings.TagRollup (10,000) events, its events counted per UTC hour
-- (no channel in the key), so that a chart of a common tag reads a few hundred rows
-- rather than its millions of rows of the tag index. tags.rolled marks the tags that
-- have them; a rolled tag stays rolled when its count falls below the threshold later,
-- and its rows stay exact (a deletion subtracts, an hour that reaches 0 loses its row).
-- A rare tag has no rows: its few events are read from the tag index.
--
-- Filling the rows of the tags already at the threshold reads their rows of the tag
-- index once, in the index's order, and groups them: this migration takes a while on a
-- large store, and the store takes no writes meanwhile. On a store of 10 million
-- events (35 million rows of the tag index, 25 million of them of 133 common tags,
-- making 95,000 hourly rows) it took 12 to 19 seconds.
ALTER TABLE tags ADD COLUMN rolled INTEGER NOT NULL DEFAULT 0;

CREATE TABLE tag_hours (
    tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    hour   INTEGER NOT NULL, -- unix ms of the hour's start (UTC), by the event's timestamp
    n      INTEGER NOT NULL, -- > 0: an hour without events has no row
    PRIMARY KEY (tag_id, hour)
) WITHOUT ROWID;

UPDATE tags SET rolled = 1 WHERE count >= 10000;
-- A key's rolled values, without reading its rare ones (a key of 200,000 users).
CREATE INDEX tags_rolled ON tags (project_id, key) WHERE rolled;

INSERT INTO tag_hours (tag_id, hour, n)
  SELECT t.tag_id, t.ts - t.ts % 3600000, count(*) FROM event_tags t
  WHERE t.tag_id IN (SELECT id FROM tags WHERE rolled)
  GROUP BY 1, 2;

-- +goose Down
DROP INDEX tags_rolled;
DROP TABLE tag_hours;
ALTER TABLE tags DROP COLUMN rolled;
