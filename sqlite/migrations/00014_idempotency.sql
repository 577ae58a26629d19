-- +goose Up
-- The answers of writes sent with an Idempotency-Key, kept with the write in its
-- transaction: a retry with the key is answered with body instead of applied again.
-- A row whose body is empty is a claim made inside a batch not yet committed.
CREATE TABLE idempotency_keys (
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status      INTEGER NOT NULL,
    body        BLOB NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
