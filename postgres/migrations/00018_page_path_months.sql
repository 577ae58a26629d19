-- +goose Up
-- The paths' views and entries per UTC month (issue 37), month the unix ms of its first
-- day's start: a Pages view's whole months are read from here, a dozen rows a path for
-- a year rather than 366, and only its other days from page_path_days. A row exists iff
-- its count is > 0, and is the sum of its month's rows of page_path_days, written and
-- taken away with them (pageviews_write.go, pageviews_purge.go).
-- A store that ran migration 17 while it made this table has it already, with the
-- same rows: kept.
CREATE TABLE IF NOT EXISTS page_path_months (
    project_id BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    month      BIGINT  NOT NULL,
    path       INTEGER NOT NULL,
    views      BIGINT  NOT NULL,
    entries    BIGINT  NOT NULL,
    PRIMARY KEY (project_id, month, path)
);

INSERT INTO page_path_months (project_id, month, path, views, entries)
  SELECT project_id, (extract(epoch FROM date_trunc('month', to_timestamp(day / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint,
    path, sum(views), sum(entries)
  FROM page_path_days GROUP BY 1, 2, 3
  ON CONFLICT (project_id, month, path) DO NOTHING;
ANALYZE page_path_months;

-- +goose Down
DROP TABLE page_path_months;
