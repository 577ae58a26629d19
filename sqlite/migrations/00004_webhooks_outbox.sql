-- +goose Up
CREATE TABLE webhooks (
    id          TEXT    PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  INTEGER REFERENCES channels(id) ON DELETE CASCADE, -- NULL: every channel
    url         TEXT    NOT NULL,
    format      TEXT    NOT NULL,
    events      TEXT    NOT NULL,  -- 'notify' or 'all'
    name        TEXT    NOT NULL DEFAULT '',
    secret      TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
CREATE INDEX webhooks_account ON webhooks (account_id, created_at);
CREATE INDEX webhooks_project ON webhooks (project_id);

-- The outbox: written in the transaction of what caused it, so that an acknowledged
-- event is delivered even if the process dies right after answering.
CREATE TABLE deliveries (
    id           INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL,             -- 'event' (to expand), 'webhook', 'webhook-test'
    account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_id     TEXT    NOT NULL DEFAULT '',
    target       TEXT    NOT NULL DEFAULT '',  -- webhook id
    message_id   TEXT    NOT NULL DEFAULT '',  -- stable across retries
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL,
    leased_until INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_at);
CREATE INDEX deliveries_target ON deliveries (target);

CREATE TABLE webhook_attempts (
    id          INTEGER PRIMARY KEY,
    webhook_id  TEXT    NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    message_id  TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    status      INTEGER NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    duration_us INTEGER NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_hook ON webhook_attempts (webhook_id, id);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE deliveries;
DROP TABLE webhooks;
