-- +goose Up
-- Inbound hooks (issue 40): a secret path, POST /hooks/{id}, that turns a provider's
-- webhooks into events of one project and channel, and the log of its latest
-- deliveries. Column for column as in the embedded store, so that migrate-store copies
-- them as they are. Times are unix milliseconds (UTC).

-- path_hash is HashSecret of the path's secret (hk_…), which is never kept; id is
-- HookID(path_hash), the name lists and commands use. template is a json hook's
-- mapping as a JSON object of its fields by the contract's names ({"event": "…",
-- "tags": "…"}; an empty field left out), NULL for the other sources.
CREATE TABLE hooks (
    seq          BIGSERIAL UNIQUE,  -- creation order (SQLite's rowid)
    id           TEXT   PRIMARY KEY,
    path_hash    BYTEA  NOT NULL UNIQUE,
    account_id   BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id   BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id   BIGINT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    source       TEXT   NOT NULL,
    name         TEXT   NOT NULL DEFAULT '',
    secret       TEXT   NOT NULL DEFAULT '',
    user_id_from TEXT   NOT NULL DEFAULT '',
    template     TEXT,
    created_at   BIGINT NOT NULL
);
CREATE INDEX hooks_account ON hooks (account_id, created_at);
CREATE INDEX hooks_project ON hooks (project_id);
CREATE INDEX hooks_channel ON hooks (channel_id);

-- A hook's latest deliveries (tidings.MaxHookAttempts are kept): our answer's status,
-- the events stored, and why a delivery was refused; never the body.
CREATE TABLE hook_attempts (
    id          BIGSERIAL PRIMARY KEY,
    hook_id     TEXT    NOT NULL REFERENCES hooks(id) ON DELETE CASCADE,
    account_id  BIGINT  NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    delivery_id TEXT    NOT NULL DEFAULT '',
    status      INTEGER NOT NULL,
    events      INTEGER NOT NULL DEFAULT 0,
    error       TEXT    NOT NULL DEFAULT '',
    at          BIGINT  NOT NULL
);
CREATE INDEX hook_attempts_hook ON hook_attempts (hook_id, id);
CREATE INDEX hook_attempts_account ON hook_attempts (account_id);

-- +goose Down
DROP TABLE hook_attempts;
DROP TABLE hooks;
