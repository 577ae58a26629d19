-- +goose Up
CREATE TABLE push_subscriptions (
    id              TEXT    PRIMARY KEY,
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id         INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    endpoint        TEXT    NOT NULL UNIQUE,
    p256dh          TEXT    NOT NULL,
    auth            TEXT    NOT NULL,
    name            TEXT    NOT NULL DEFAULT '',
    browser         TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    last_success_at INTEGER
);
CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id, created_at);
CREATE INDEX push_subscriptions_account ON push_subscriptions (account_id);

CREATE TABLE notify_prefs (
    user_id     INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    muted       TEXT    NOT NULL DEFAULT '[]',  -- JSON list of "project" or "project/channel"
    quiet_start INTEGER NOT NULL DEFAULT 0,
    quiet_end   INTEGER NOT NULL DEFAULT 0,
    time_zone   TEXT    NOT NULL DEFAULT ''
);

-- What became of each notify event for each device: the event page says it.
CREATE TABLE push_records (
    event_id        TEXT    NOT NULL,
    subscription_id TEXT    NOT NULL,
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id         INTEGER NOT NULL,
    status          TEXT    NOT NULL,
    at              INTEGER NOT NULL,
    PRIMARY KEY (event_id, subscription_id)
) WITHOUT ROWID;
CREATE INDEX push_records_user ON push_records (user_id, status, at);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- How many events a collapsed notification stands for.
ALTER TABLE deliveries ADD COLUMN count INTEGER NOT NULL DEFAULT 0;

-- A job with a message id is added once (quiet-hours summaries are keyed by user and end).
CREATE UNIQUE INDEX deliveries_message ON deliveries (message_id) WHERE message_id != '';

-- +goose Down
DROP INDEX deliveries_message;
DROP TABLE settings;
DROP TABLE push_records;
DROP TABLE notify_prefs;
DROP TABLE push_subscriptions;
