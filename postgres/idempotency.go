package postgres

import (
	"context"
	"time"

	"github.com/tidings-dev/tidings"
)

// A keyed write claims its key first, in its transaction: a row without a body. A
// claim of a key that another instance's transaction holds waits for that transaction
// and then finds the key taken. A write that is refused deletes its claim; one that
// succeeds writes its answer into it, before the commit.
const (
	sqlClaimKey = `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
		VALUES ($1, $2, $3, $4, '', $5) ON CONFLICT (account_id, key) DO NOTHING`
	sqlDropClaim  = `DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2`
	sqlKeepAnswer = `UPDATE idempotency_keys SET body = $3 WHERE account_id = $1 AND key = $2`
)

// keyClaim is a keyed write's hold on its key, until it is kept or dropped.
type keyClaim struct {
	accountID int64
	key       string
}

// claimFor claims k's key when the write has one (a nil claim otherwise), or fails
// with ErrKeyTaken when another request kept it (nothing is written then).
func claimFor[T any](ctx context.Context, x querier, accountID int64, k *tidings.Keyed[T], now int64) (*keyClaim, error) {
	if k == nil {
		return nil, nil
	}
	tag, err := x.Exec(ctx, sqlClaimKey, accountID, k.Key, k.Fingerprint, k.Status, now)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, tidings.ErrKeyTaken
	}
	return &keyClaim{accountID, k.Key}, nil
}

// settle ends a claim: kept with the answer rendered from result when refusal is nil,
// dropped otherwise. A nil claim has nothing to settle.
func settle[T any](ctx context.Context, x querier, c *keyClaim, k *tidings.Keyed[T], result T, refusal error) error {
	if c == nil {
		return nil
	}
	if refusal != nil {
		_, err := x.Exec(ctx, sqlDropClaim, c.accountID, c.key)
		return err
	}
	body, err := k.Render(result)
	if err != nil {
		return err
	}
	_, err = x.Exec(ctx, sqlKeepAnswer, c.accountID, c.key, body)
	return err
}

// FindAnswer returns the answer kept under the account's key.
func (db *DB) FindAnswer(ctx context.Context, accountID int64, key string) (*tidings.KeptAnswer, error) {
	a := &tidings.KeptAnswer{Key: key}
	var created int64
	err := db.row(ctx, `SELECT fingerprint, status, body, created_at FROM idempotency_keys
		WHERE account_id = $1 AND key = $2`, accountID, key).Scan(&a.Fingerprint, &a.Status, &a.Body, &created)
	if noRows(err) {
		return nil, tidings.ErrNoSuchAnswer
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt = fromMS(created)
	return a, nil
}

// ExpireAnswers deletes up to max answers kept before before (hooks' keys: before
// hookBefore), oldest first of each kind. Claims of batches under way are invisible
// to it and locked rows skipped. Each kind's DELETE walks its own partial index
// (migration 23): its WHERE term is the index's, word for word.
func (db *DB) ExpireAnswers(ctx context.Context, before, hookBefore time.Time, max int) (int, error) {
	n := 0
	for _, q := range []struct {
		sql    string
		before time.Time
	}{
		{`DELETE FROM idempotency_keys WHERE (account_id, key) IN (SELECT account_id, key FROM idempotency_keys
			WHERE substr(key, 1, 5) = 'hook:' AND created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, hookBefore},
		{`DELETE FROM idempotency_keys WHERE (account_id, key) IN (SELECT account_id, key FROM idempotency_keys
			WHERE substr(key, 1, 5) <> 'hook:' AND created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, before},
	} {
		if n >= max {
			break
		}
		tag, err := db.pool.Exec(ctx, q.sql, ms(q.before), max-n)
		if err != nil {
			return n, mapErr(err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}
