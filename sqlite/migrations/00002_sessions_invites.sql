-- +goose Up
CREATE TABLE sessions (
    hash        BLOB    PRIMARY KEY,  -- SHA-256 of the cookie value
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE invites (
    hash        BLOB    PRIMARY KEY,  -- SHA-256 of the link's secret
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_by  INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
) WITHOUT ROWID;

-- +goose Down
DROP TABLE invites;
DROP TABLE sessions;
