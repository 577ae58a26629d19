-- +goose Up
-- Page views (issue 37): what ls.js records once a user id is set. They are not events:
-- a compact table of their own, kept with the project's retention, with what is
-- derived from them (pageviews.go): a user's activity per minute (sessions), and daily
-- counts for the Pages view, which never reads page_views itself.

-- Visitors whose browser signals Global Privacy Control are not recorded unless set.
ALTER TABLE projects ADD COLUMN ignore_gpc INTEGER NOT NULL DEFAULT 0;
-- A user's page views, kept like people.events.
ALTER TABLE people ADD COLUMN page_views INTEGER NOT NULL DEFAULT 0;
-- The orders of the users list (PersonQuery.Sort) besides last seen.
CREATE INDEX people_events ON people (project_id, events, id);
CREATE INDEX people_first_seen ON people (project_id, first_seen, id);

-- The project's paths, titles, referrers and referrer hosts, each stored once: a view
-- names them by id. An entry is never reused for another text, and stays when its
-- views expire (a project's distinct pages are few).
CREATE TABLE page_texts (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    text       TEXT    NOT NULL,
    UNIQUE (project_id, text)
);

-- One row per view, about 25 bytes, and two indexes of about 18 each.
CREATE TABLE page_views (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    person_ref INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    ts         INTEGER NOT NULL, -- unix ms
    path       INTEGER NOT NULL, -- page_texts.id
    title      INTEGER NOT NULL, -- page_texts.id, 0: none
    referrer   INTEGER NOT NULL, -- page_texts.id, 0: none
    entry      INTEGER NOT NULL  -- 1: the visit entered the site here
);
CREATE INDEX page_views_recent ON page_views (project_id, ts, id);
CREATE INDEX page_views_person ON page_views (person_ref, ts, id);

-- A user's activity per UTC minute (unix minutes): events with its user_id and page
-- views. A row exists iff events + views > 0. Sessions are counted from these rows.
CREATE TABLE user_minutes (
    person_ref INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    minute     INTEGER NOT NULL,
    events     INTEGER NOT NULL,
    views      INTEGER NOT NULL,
    PRIMARY KEY (person_ref, minute)
) WITHOUT ROWID;

INSERT INTO user_minutes (person_ref, minute, events, views)
  SELECT p.id, e.ts / 60000, count(*), 0 FROM events e JOIN people p ON p.project_id = e.project_id AND p.user_id = e.user_id
  WHERE e.user_id != '' GROUP BY 1, 2;

-- A user's sessions (tidings.CountSessions of its minutes), kept as its minutes come
-- and go (user_sessions.go): a minute more than 30 after the one before starts one.
ALTER TABLE people ADD COLUMN sessions INTEGER NOT NULL DEFAULT 0;
UPDATE people SET sessions = s.n FROM (
    SELECT person_ref, count(*) AS n FROM (
      SELECT person_ref, minute - lag(minute) OVER (PARTITION BY person_ref ORDER BY minute) AS gap FROM user_minutes)
    WHERE gap IS NULL OR gap > 30 GROUP BY person_ref) s
  WHERE people.id = s.person_ref;

-- A user's views per path: its profile's top pages.
CREATE TABLE page_person_paths (
    person_ref INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    path       INTEGER NOT NULL, -- page_texts.id
    views      INTEGER NOT NULL, -- > 0
    PRIMARY KEY (person_ref, path)
) WITHOUT ROWID;

-- The Pages view's daily counts (UTC days, unix days): a row exists iff its count is > 0.
CREATE TABLE page_days (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        INTEGER NOT NULL,
    views      INTEGER NOT NULL,
    entries    INTEGER NOT NULL,
    users      INTEGER NOT NULL, -- rows of page_user_days of the day
    PRIMARY KEY (project_id, day)
) WITHOUT ROWID;
CREATE TABLE page_user_days (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        INTEGER NOT NULL,
    person_ref INTEGER NOT NULL, -- people.id (goes with the project)
    views      INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, person_ref)
) WITHOUT ROWID;
CREATE TABLE page_path_days (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        INTEGER NOT NULL,
    path       INTEGER NOT NULL, -- page_texts.id
    views      INTEGER NOT NULL,
    entries    INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, path)
) WITHOUT ROWID;
CREATE TABLE page_referrer_days (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day        INTEGER NOT NULL,
    host       INTEGER NOT NULL, -- page_texts.id of the referrer's host (tidings.ReferrerHost)
    entries    INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, host)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE page_referrer_days;
DROP TABLE page_path_days;
DROP TABLE page_user_days;
DROP TABLE page_days;
DROP TABLE page_person_paths;
DROP TABLE user_minutes;
DROP TABLE page_views;
DROP TABLE page_texts;
DROP INDEX people_first_seen;
DROP INDEX people_events;
ALTER TABLE people DROP COLUMN sessions;
ALTER TABLE people DROP COLUMN page_views;
ALTER TABLE projects DROP COLUMN ignore_gpc;
