-- +goose Up
-- The PostgreSQL schema holds what the embedded store holds, column for column, so that
-- `tidings migrate-store` copies one into the other. Times are unix milliseconds (UTC).
CREATE TABLE accounts (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT   NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);

CREATE TABLE users (
    id            BIGSERIAL PRIMARY KEY,
    account_id    BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email         TEXT   NOT NULL,
    password_hash TEXT   NOT NULL,
    role          TEXT   NOT NULL CHECK (role IN ('owner', 'member')),
    created_at    BIGINT NOT NULL
);
-- Emails compare without case, as in the embedded store (COLLATE NOCASE).
CREATE UNIQUE INDEX users_email ON users (lower(email));
CREATE INDEX users_account ON users (account_id);

CREATE TABLE projects (
    id                   BIGSERIAL PRIMARY KEY,
    account_id           BIGINT  NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name                 TEXT    NOT NULL,
    auto_create_channels BOOLEAN NOT NULL DEFAULT false,
    created_at           BIGINT  NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE channels (
    id          BIGSERIAL PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (project_id, name)
);

CREATE TABLE tokens (
    id           TEXT   PRIMARY KEY,
    account_id   BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name         TEXT   NOT NULL,
    hash         BYTEA  NOT NULL,
    access       TEXT   NOT NULL CHECK (access IN ('public', 'full')),
    project_id   BIGINT REFERENCES projects(id) ON DELETE CASCADE,
    channel_id   BIGINT REFERENCES channels(id) ON DELETE CASCADE,
    roles        TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX tokens_account ON tokens (account_id, created_at);

CREATE TABLE events (
    id          TEXT    PRIMARY KEY,  -- UUIDv7: sorts by acceptance time
    project_id  BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  BIGINT  NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    event       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    icon        TEXT    NOT NULL DEFAULT '',
    notify      BOOLEAN NOT NULL DEFAULT false,
    tags        TEXT    NOT NULL DEFAULT '{}', -- JSON object in the order sent
    parser      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    ts          BIGINT  NOT NULL,
    created_at  BIGINT  NOT NULL
);
CREATE INDEX events_project_ts ON events (project_id, ts DESC, id DESC);
CREATE INDEX events_channel_ts ON events (channel_id, ts DESC, id DESC);
CREATE INDEX events_project_id ON events (project_id, id);
CREATE INDEX events_created ON events (created_at);

CREATE TABLE event_tags (
    event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (event_id, key)
);
CREATE INDEX event_tags_kv ON event_tags (key, value, event_id);

CREATE TABLE insights (
    id          BIGSERIAL PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title       TEXT   NOT NULL,
    value       TEXT   NOT NULL,
    prefix      TEXT   NOT NULL DEFAULT '',
    suffix      TEXT   NOT NULL DEFAULT '',
    icon        TEXT   NOT NULL DEFAULT '',
    change      TEXT   NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (project_id, title)
);

CREATE TABLE insight_points (
    id         BIGSERIAL PRIMARY KEY,
    insight_id BIGINT NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
    ts         BIGINT NOT NULL,
    value      TEXT   NOT NULL
);
CREATE INDEX insight_points_insight_ts ON insight_points (insight_id, ts);

CREATE TABLE sessions (
    hash        BYTEA  PRIMARY KEY,  -- SHA-256 of the cookie value
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE invites (
    hash        BYTEA  PRIMARY KEY,  -- SHA-256 of the link's secret
    account_id  BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_by  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);

CREATE TABLE webhooks (
    seq         BIGSERIAL UNIQUE,  -- creation order (SQLite's rowid)
    id          TEXT   PRIMARY KEY,
    account_id  BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  BIGINT REFERENCES channels(id) ON DELETE CASCADE, -- NULL: every channel
    url         TEXT   NOT NULL,
    format      TEXT   NOT NULL,
    events      TEXT   NOT NULL,  -- 'notify' or 'all'
    name        TEXT   NOT NULL DEFAULT '',
    secret      TEXT   NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);
CREATE INDEX webhooks_account ON webhooks (account_id, created_at);
CREATE INDEX webhooks_project ON webhooks (project_id);

-- The outbox, written in the transaction of what caused it. Instances claim jobs with
-- FOR UPDATE SKIP LOCKED and a lease: a dead instance's jobs are due again when it ends.
CREATE TABLE deliveries (
    id           BIGSERIAL PRIMARY KEY,
    kind         TEXT   NOT NULL,
    account_id   BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id     TEXT   NOT NULL DEFAULT '',
    target       TEXT   NOT NULL DEFAULT '',
    message_id   TEXT   NOT NULL DEFAULT '',
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    leased_until BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    count        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX deliveries_due ON deliveries (next_at);
CREATE INDEX deliveries_target ON deliveries (target);
CREATE UNIQUE INDEX deliveries_message ON deliveries (message_id) WHERE message_id != '';

CREATE TABLE webhook_attempts (
    id          BIGSERIAL PRIMARY KEY,
    webhook_id  TEXT    NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    message_id  TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    status      INTEGER NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    duration_us BIGINT  NOT NULL,
    at          BIGINT  NOT NULL
);
CREATE INDEX webhook_attempts_hook ON webhook_attempts (webhook_id, id);

CREATE TABLE push_subscriptions (
    seq             BIGSERIAL UNIQUE,  -- creation order (SQLite's rowid)
    id              TEXT   PRIMARY KEY,
    account_id      BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id         BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    endpoint        TEXT   NOT NULL UNIQUE,
    p256dh          TEXT   NOT NULL,
    auth            TEXT   NOT NULL,
    name            TEXT   NOT NULL DEFAULT '',
    browser         TEXT   NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    last_success_at BIGINT
);
CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id, created_at);
CREATE INDEX push_subscriptions_account ON push_subscriptions (account_id);

CREATE TABLE notify_prefs (
    user_id     BIGINT  PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    muted       TEXT    NOT NULL DEFAULT '[]',
    quiet_start INTEGER NOT NULL DEFAULT 0,
    quiet_end   INTEGER NOT NULL DEFAULT 0,
    time_zone   TEXT    NOT NULL DEFAULT ''
);

CREATE TABLE push_records (
    event_id        TEXT   NOT NULL,
    subscription_id TEXT   NOT NULL,
    account_id      BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id         BIGINT NOT NULL,
    status          TEXT   NOT NULL,
    at              BIGINT NOT NULL,
    PRIMARY KEY (event_id, subscription_id)
);
CREATE INDEX push_records_user ON push_records (user_id, status, at);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The instances that share this database, each seen within the last seconds: they
-- divide the cluster's rate limits between them.
CREATE TABLE instances (
    id      TEXT   PRIMARY KEY,
    seen_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE instances;
DROP TABLE settings;
DROP TABLE push_records;
DROP TABLE notify_prefs;
DROP TABLE push_subscriptions;
DROP TABLE webhook_attempts;
DROP TABLE deliveries;
DROP TABLE webhooks;
DROP TABLE invites;
DROP TABLE sessions;
DROP TABLE insight_points;
DROP TABLE insights;
DROP TABLE event_tags;
DROP TABLE events;
DROP TABLE tokens;
DROP TABLE channels;
DROP TABLE projects;
DROP TABLE users;
DROP TABLE accounts;
