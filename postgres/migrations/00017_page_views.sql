-- +goose Up
-- Page views (ls.js): not events. Each view is a compact row of numbers: its path,
-- title and referrer are ids in a per-project dictionary of strings (page_texts),
-- its time unix ms like an event's. What the Pages view and a user's profile read is
-- kept in count tables written in the view's transaction (and taken off by the
-- retention purge), never by scanning page_views.

-- Visitors whose browser signals Global Privacy Control are not recorded unless the
-- project says otherwise.
ALTER TABLE projects ADD COLUMN ignore_gpc BOOLEAN NOT NULL DEFAULT false;

-- A user's page views, as people.events counts its events.
ALTER TABLE people ADD COLUMN page_views BIGINT NOT NULL DEFAULT 0;
-- The users list sorts by last seen (people_recent), events or first seen.
CREATE INDEX people_events ON people (project_id, events, id);
CREATE INDEX people_first_seen ON people (project_id, first_seen, id);

-- The strings of a project's page views: paths, titles, referrers and referrers'
-- hosts. A string is found by its hash (the first 16 bytes of its SHA-256): a path
-- may be longer than a B-tree entry may. Id 0 is no string (an empty title or referrer).
CREATE TABLE page_texts (
    id         SERIAL PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    hash       BYTEA  NOT NULL,
    text       TEXT   NOT NULL,
    UNIQUE (project_id, hash)
);

-- The columns are ordered for alignment: 72 bytes a row with its header. A view goes
-- with its user (and so with its project).
CREATE TABLE page_views (
    project_id BIGINT  NOT NULL,
    person_ref BIGINT  NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    ts         BIGINT  NOT NULL, -- unix ms
    id         BIGSERIAL NOT NULL, -- breaks ties of ts in the lists' order
    path       INTEGER NOT NULL, -- page_texts ids
    title      INTEGER NOT NULL,
    referrer   INTEGER NOT NULL,
    entry      BOOLEAN NOT NULL
);
CREATE INDEX page_views_recent ON page_views (project_id, ts, id);
CREATE INDEX page_views_person ON page_views (person_ref, ts, id);

-- A user's activity per UTC minute: its events (with its user_id) and page views. A
-- row exists while events + views > 0. Sessions are counted from it.
CREATE TABLE user_minutes (
    person_ref BIGINT  NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    minute     BIGINT  NOT NULL, -- unix ms of the minute's start
    events     INTEGER NOT NULL,
    views      INTEGER NOT NULL,
    PRIMARY KEY (person_ref, minute)
);
INSERT INTO user_minutes (person_ref, minute, events, views)
  SELECT p.id, e.ts - e.ts % 60000, count(*), 0
  FROM events e JOIN people p ON p.project_id = e.project_id AND p.user_id = e.user_id
  WHERE e.user_id <> ''
  GROUP BY 1, 2;
-- A user's sessions, kept as its minutes change (a profile reads them at once, not
-- 100,000 minutes): a minute starts one when no minute of the 30 before it has activity.
ALTER TABLE people ADD COLUMN sessions BIGINT NOT NULL DEFAULT 0;
UPDATE people p SET sessions = s.n
  FROM (SELECT person_ref, count(*) AS n FROM (SELECT person_ref, minute - lag(minute) OVER (PARTITION BY person_ref ORDER BY minute) AS gap
        FROM user_minutes) m WHERE gap IS NULL OR gap > 1800000 GROUP BY 1) s
  WHERE s.person_ref = p.id;

-- A user's views per path: the profile's top pages.
CREATE TABLE page_person_paths (
    person_ref BIGINT  NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    path       INTEGER NOT NULL,
    views      BIGINT  NOT NULL,
    PRIMARY KEY (person_ref, path)
);

-- The Pages view's daily counts (UTC days, unix ms of their start). A row exists while
-- its count is above 0. page_days.users is the number of page_user_days rows of its day.
CREATE TABLE page_user_days (
    project_id BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        BIGINT  NOT NULL,
    person_ref BIGINT  NOT NULL,
    views      INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, person_ref)
);
CREATE TABLE page_days (
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        BIGINT NOT NULL,
    views      BIGINT NOT NULL,
    entries    BIGINT NOT NULL,
    users      BIGINT NOT NULL,
    PRIMARY KEY (project_id, day)
);
CREATE TABLE page_path_days (
    project_id BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        BIGINT  NOT NULL,
    path       INTEGER NOT NULL,
    views      BIGINT  NOT NULL,
    entries    BIGINT  NOT NULL,
    PRIMARY KEY (project_id, day, path)
);
-- The entries per host of their referrer (a page_texts id; entries without a referrer
-- have none).
CREATE TABLE page_referrer_days (
    project_id BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        BIGINT  NOT NULL,
    host       INTEGER NOT NULL,
    entries    BIGINT  NOT NULL,
    PRIMARY KEY (project_id, day, host)
);
ANALYZE user_minutes;

-- +goose Down
DROP TABLE page_referrer_days;
DROP TABLE page_path_days;
DROP TABLE page_days;
DROP TABLE page_user_days;
DROP TABLE page_person_paths;
DROP TABLE user_minutes;
DROP TABLE page_views;
DROP TABLE page_texts;
ALTER TABLE people DROP COLUMN sessions;
DROP INDEX people_first_seen;
DROP INDEX people_events;
ALTER TABLE people DROP COLUMN page_views;
ALTER TABLE projects DROP COLUMN ignore_gpc;
