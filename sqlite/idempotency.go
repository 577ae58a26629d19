package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

// A keyed write claims its key first, in its batch's transaction: a row without a body.
// A write that is then refused deletes its claim; one that succeeds writes its answer
// into it. Both happen before the batch commits, so the key and the effect are
// committed together or not at all.
const (
	sqlClaimKey = `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
		VALUES (?, ?, ?, ?, x'', ?) ON CONFLICT (account_id, key) DO NOTHING`
	sqlDropClaim  = `DELETE FROM idempotency_keys WHERE account_id = ? AND key = ?`
	sqlKeepAnswer = `UPDATE idempotency_keys SET body = ? WHERE account_id = ? AND key = ?`
)

// keyClaim is a keyed write's hold on its key, until it is kept or dropped.
type keyClaim struct {
	accountID int64
	key       string
}

// claimKey claims the account's key for a write, or fails with ErrKeyTaken when
// another request holds it (nothing is written then).
func claimKey(ctx context.Context, x execer, accountID int64, key, fingerprint string, status int, now time.Time) (*keyClaim, error) {
	res, err := x.ExecContext(ctx, sqlClaimKey, accountID, key, fingerprint, status, ms(now))
	if err != nil {
		return nil, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, tidings.ErrKeyTaken
	}
	return &keyClaim{accountID, key}, nil
}

// keep writes the answer into the claim.
func (c *keyClaim) keep(ctx context.Context, x execer, body []byte) error {
	_, err := x.ExecContext(ctx, sqlKeepAnswer, body, c.accountID, c.key)
	return err
}

// drop gives the claim up: its write was refused.
func (c *keyClaim) drop(ctx context.Context, x execer) error {
	_, err := x.ExecContext(ctx, sqlDropClaim, c.accountID, c.key)
	return err
}

// claimFor claims k's key when the write has one (a nil claim otherwise).
func claimFor[T any](ctx context.Context, x execer, accountID int64, k *tidings.Keyed[T], now time.Time) (*keyClaim, error) {
	if k == nil {
		return nil, nil
	}
	return claimKey(ctx, x, accountID, k.Key, k.Fingerprint, k.Status, now)
}

// settle ends a claim: kept with the answer rendered from result when err is nil,
// dropped otherwise. A nil claim has nothing to settle.
func settle[T any](ctx context.Context, x execer, c *keyClaim, k *tidings.Keyed[T], result T, err error) error {
	if c == nil {
		return nil
	}
	if err != nil {
		return c.drop(ctx, x)
	}
	body, err := k.Render(result)
	if err != nil {
		return err
	}
	return c.keep(ctx, x, body)
}

// FindAnswer returns the answer kept under the account's key.
func (db *DB) FindAnswer(ctx context.Context, accountID int64, key string) (*tidings.KeptAnswer, error) {
	a := &tidings.KeptAnswer{Key: key}
	var created int64
	err := db.read.QueryRowContext(ctx, `SELECT fingerprint, status, body, created_at FROM idempotency_keys
		WHERE account_id = ? AND key = ?`, accountID, key).Scan(&a.Fingerprint, &a.Status, &a.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.ErrNoSuchAnswer
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt = fromMS(created)
	return a, nil
}

// ExpireAnswers deletes up to max answers kept before before (hooks' keys: before
// hookBefore), oldest first of each kind, in one group-committed transaction. Each
// kind's DELETE walks its own partial index (migration 27): its WHERE term is the
// index's, word for word.
func (db *DB) ExpireAnswers(ctx context.Context, before, hookBefore time.Time, max int) (int, error) {
	var n int64
	err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n = 0
		for _, q := range []struct {
			sql    string
			before time.Time
		}{
			{`DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys
				WHERE substr(key, 1, 5) = 'hook:' AND created_at < ? ORDER BY created_at LIMIT ?)`, hookBefore},
			{`DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys
				WHERE substr(key, 1, 5) <> 'hook:' AND created_at < ? ORDER BY created_at LIMIT ?)`, before},
		} {
			if n >= int64(max) {
				break
			}
			res, err := tx.ExecContext(ctx, q.sql, ms(q.before), int64(max)-n)
			if err != nil {
				return err
			}
			d, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += d
		}
		return nil
	})
	if err != nil {
		return 0, err // n is not read: a job its caller stopped waiting for may still run
	}
	return int(n), nil
}
