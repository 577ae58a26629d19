package sqlite

import (
	"context"
	"time"

	"github.com/tidings-dev/tidings"
)

// WebhookRetries returns when the webhook's pending deliveries are tried next, by
// message ID. A job leased right now is tried now: its next_at is its due time.
func (db *DB) WebhookRetries(ctx context.Context, accountID int64, webhookID string) (map[string]time.Time, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT message_id, next_at FROM deliveries
		WHERE account_id = ? AND target = ? AND kind IN (?, ?, ?, ?) AND message_id != ''`,
		accountID, webhookID, tidings.DeliverWebhook, tidings.DeliverTest, tidings.DeliverWebhookAck, tidings.DeliverWebhookPress)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var next int64
		if err := rows.Scan(&id, &next); err != nil {
			return nil, err
		}
		out[id] = fromMS(next)
	}
	return out, rows.Err()
}
