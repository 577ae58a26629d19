-- +goose Up
-- Inbound hooks' delivery ids (keys starting "hook:") are kept longer than clients'
-- idempotency keys (tidings.HookKeyKeep, 72 h, against IdempotencyKeep, 24 h): Stripe
-- retries for three days. One partial index per kind, so that the purge of each finds
-- its expired keys without walking the other kind's younger ones. The queries repeat
-- these WHERE terms word for word: PostgreSQL proves a partial index usable from them.
DROP INDEX idempotency_keys_created;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at) WHERE substr(key, 1, 5) <> 'hook:';
CREATE INDEX idempotency_keys_hook_created ON idempotency_keys (created_at) WHERE substr(key, 1, 5) = 'hook:';

-- +goose Down
DROP INDEX idempotency_keys_hook_created;
DROP INDEX idempotency_keys_created;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
