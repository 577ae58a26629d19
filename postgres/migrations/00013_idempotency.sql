-- +goose Up
-- The answers of writes sent with an Idempotency-Key, kept with the write in its
-- transaction: a retry with the key is answered with body instead of applied again.
-- A row whose body is empty is a claim made inside a batch not yet committed; a second
-- instance's claim of the same key waits for that batch, then finds the key kept.
CREATE TABLE idempotency_keys (
    account_id  BIGINT  NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    body        BYTEA   NOT NULL,
    created_at  BIGINT  NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
