-- +goose Up
-- Times are unix milliseconds (UTC).
CREATE TABLE accounts (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    account_id    INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email         TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('owner', 'member')),
    created_at    INTEGER NOT NULL
);

CREATE TABLE projects (
    id                   INTEGER PRIMARY KEY,
    account_id           INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name                 TEXT    NOT NULL,
    auto_create_channels INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE channels (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (project_id, name)
);

-- A token limited to a project or channel goes with it: widening it to every project
-- when its limit disappears would hand out access nobody granted.
CREATE TABLE tokens (
    id           TEXT    PRIMARY KEY,
    account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    hash         BLOB    NOT NULL,
    access       TEXT    NOT NULL CHECK (access IN ('public', 'full')),
    project_id   INTEGER REFERENCES projects(id) ON DELETE CASCADE,
    channel_id   INTEGER REFERENCES channels(id) ON DELETE CASCADE,
    roles        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX tokens_account ON tokens (account_id, created_at);

CREATE TABLE events (
    id          TEXT    PRIMARY KEY,  -- UUIDv7: sorts by acceptance time
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    event       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    icon        TEXT    NOT NULL DEFAULT '',
    notify      INTEGER NOT NULL DEFAULT 0,
    tags        TEXT    NOT NULL DEFAULT '{}', -- JSON object in the order sent
    parser      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    ts          INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX events_project_ts ON events (project_id, ts DESC, id DESC);
CREATE INDEX events_channel_ts ON events (channel_id, ts DESC, id DESC);

CREATE TABLE event_tags (
    event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (event_id, key)
) WITHOUT ROWID;
CREATE INDEX event_tags_kv ON event_tags (key, value, event_id);

CREATE TABLE insights (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title       TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    prefix      TEXT    NOT NULL DEFAULT '',
    suffix      TEXT    NOT NULL DEFAULT '',
    icon        TEXT    NOT NULL DEFAULT '',
    change      TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (project_id, title)
);

CREATE TABLE insight_points (
    insight_id INTEGER NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
    ts         INTEGER NOT NULL,
    value      TEXT    NOT NULL
);
CREATE INDEX insight_points_insight_ts ON insight_points (insight_id, ts);

-- +goose Down
DROP TABLE insight_points;
DROP TABLE insights;
DROP TABLE event_tags;
DROP TABLE events;
DROP TABLE tokens;
DROP TABLE channels;
DROP TABLE projects;
DROP TABLE users;
DROP TABLE accounts;
