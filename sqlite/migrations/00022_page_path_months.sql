-- +goose Up
-- The Pages view's paths per UTC month (issue 37): a range's whole months are read from
-- here and only its days before the first and after the last from page_path_days, so
-- that a year is about 12 rows per path rather than 366. month is the unix day of the
-- month's first day (the unit of page_path_days.day); a row exists iff its count is > 0,
-- and it is the sum of its month's rows of page_path_days, written and subtracted with
-- them.
CREATE TABLE page_path_months (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    month      INTEGER NOT NULL,
    path       INTEGER NOT NULL, -- page_texts.id
    views      INTEGER NOT NULL,
    entries    INTEGER NOT NULL,
    PRIMARY KEY (project_id, month, path)
) WITHOUT ROWID;

INSERT INTO page_path_months (project_id, month, path, views, entries)
  SELECT project_id, unixepoch(day * 86400, 'unixepoch', 'start of month') / 86400, path, sum(views), sum(entries)
  FROM page_path_days GROUP BY 1, 2, 3;

-- +goose Down
DROP TABLE page_path_months;
