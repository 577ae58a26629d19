-- +goose Up
-- Inbound hooks (issue 40): a secret path, POST /hooks/hk_…, that turns a provider's
-- webhook into events of one project and channel. The path's secret is kept as its
-- hash (path_hash, found by FindHookByPath); id is tidings.HookID(path_hash), the
-- public name. template is a json hook's mapping as a JSON object of the contract's
-- field names ({"event":…,"description":…,"icon":…,"tags":…,"user_id":…,"notify":…},
-- an empty field left out), NULL for the other sources. Times are unix ms. A hook
-- goes with its account, project and channel, its log with it.
CREATE TABLE hooks (
    id           TEXT    PRIMARY KEY,
    path_hash    BLOB    NOT NULL UNIQUE,
    account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id   INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    source       TEXT    NOT NULL,
    name         TEXT    NOT NULL DEFAULT '',
    secret       TEXT    NOT NULL DEFAULT '',
    user_id_from TEXT    NOT NULL DEFAULT '',
    template     TEXT,
    created_at   INTEGER NOT NULL
);
CREATE INDEX hooks_account ON hooks (account_id, created_at);
-- The deletions of a project and of a channel find their hooks by these.
CREATE INDEX hooks_project ON hooks (project_id);
CREATE INDEX hooks_channel ON hooks (channel_id);

-- A hook's delivery log: the latest tidings.MaxHookAttempts are kept (RecordHookAttempt
-- drops the older). account_id is the hook's (hook.tenant checks it).
CREATE TABLE hook_attempts (
    id          INTEGER PRIMARY KEY,
    hook_id     TEXT    NOT NULL REFERENCES hooks(id) ON DELETE CASCADE,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    delivery_id TEXT    NOT NULL DEFAULT '',
    status      INTEGER NOT NULL,
    events      INTEGER NOT NULL DEFAULT 0,
    error       TEXT    NOT NULL DEFAULT '',
    at          INTEGER NOT NULL
);
CREATE INDEX hook_attempts_hook ON hook_attempts (hook_id, id);
CREATE INDEX hook_attempts_account ON hook_attempts (account_id);

-- +goose Down
DROP TABLE hook_attempts;
DROP TABLE hooks;
