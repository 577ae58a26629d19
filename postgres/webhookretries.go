package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// WebhookRetries returns when the webhook's pending deliveries are tried next, by
// message ID. A job leased right now is tried now: its next_at is its due time.
func (db *DB) WebhookRetries(ctx context.Context, accountID int64, webhookID string) (map[string]time.Time, error) {
	type retry struct {
		id   string
		next int64
	}
	rs, err := query(ctx, db.pool, func(r pgx.Row) (retry, error) {
		var x retry
		err := r.Scan(&x.id, &x.next)
		return x, err
	}, `SELECT message_id, next_at FROM deliveries
		WHERE account_id = $1 AND target = $2 AND kind IN ($3, $4, $5, $6) AND message_id <> ''`,
		accountID, webhookID, tidings.DeliverWebhook, tidings.DeliverTest, tidings.DeliverWebhookAck, tidings.DeliverWebhookPress)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(rs))
	for _, x := range rs {
		out[x.id] = fromMS(x.next)
	}
	return out, nil
}
