package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

// maxAttemptsKept is how many attempts of a webhook the UI can list.
const maxAttemptsKept = 20

const webhookColumns = `w.id, w.account_id, p.name, COALESCE(c.name, ''), w.url, w.format, w.events, w.name, w.secret, w.chat_id, w.user_key, w.created_at
	FROM webhooks w JOIN projects p ON p.id = w.project_id LEFT JOIN channels c ON c.id = w.channel_id`

func scanWebhook(s scanner) (*tidings.Webhook, error) {
	w := &tidings.Webhook{}
	var created int64
	if err := s.Scan(&w.ID, &w.AccountID, &w.Project, &w.Channel, &w.URL, &w.Format, &w.Events, &w.Name, &w.Secret, &w.ChatID, &w.UserKey, &created); err != nil {
		return nil, err
	}
	w.CreatedAt = fromMS(created)
	return w, nil
}

func queryWebhooks(ctx context.Context, q *sql.DB, where string, args ...any) ([]*tidings.Webhook, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+webhookColumns+` WHERE `+where+` ORDER BY w.created_at, w.rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// CreateWebhook stores w in the account's project (and channel).
func (db *DB) CreateWebhook(ctx context.Context, accountID int64, w *tidings.Webhook) error {
	p, err := findProject(ctx, db.reads, accountID, w.Project)
	if err != nil {
		return err
	}
	var channel sql.NullInt64
	if w.Channel != "" {
		id, err := db.channelID(ctx, p, w.Channel)
		if err != nil {
			return err
		}
		channel = sql.NullInt64{Int64: id, Valid: true}
	}
	w.AccountID = accountID
	w.CreatedAt = db.stamp()
	_, err = db.write.ExecContext(ctx, `INSERT INTO webhooks (id, account_id, project_id, channel_id, url, format, events, name, secret, chat_id, user_key, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, accountID, p.ID, channel, w.URL, w.Format, w.Events, w.Name, w.Secret,
		w.ChatID, w.UserKey, ms(w.CreatedAt))
	return err
}

// ListWebhooks returns the account's webhooks.
func (db *DB) ListWebhooks(ctx context.Context, accountID int64) ([]*tidings.Webhook, error) {
	return queryWebhooks(ctx, db.read, `w.account_id = ?`, accountID)
}

// FindWebhook returns one webhook of the account.
func (db *DB) FindWebhook(ctx context.Context, accountID int64, id string) (*tidings.Webhook, error) {
	ws, err := queryWebhooks(ctx, db.read, `w.account_id = ? AND w.id = ?`, accountID, id)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, tidings.WebhookNotFound(id)
	}
	return ws[0], nil
}

// DeleteWebhook deletes the webhook and its pending deliveries.
func (db *DB) DeleteWebhook(ctx context.Context, accountID int64, id string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE account_id = ? AND id = ?`, accountID, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.WebhookNotFound(id)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE target = ?`, id); err != nil {
		return err
	}
	return tx.Commit()
}

// WebhooksFor returns the project's webhooks for every channel and for this one.
func (db *DB) WebhooksFor(ctx context.Context, accountID int64, project, channel string) ([]*tidings.Webhook, error) {
	return queryWebhooks(ctx, db.read, `w.account_id = ? AND p.name = ? AND (w.channel_id IS NULL OR c.name = ?)`,
		accountID, project, channel)
}

// RecordWebhookAttempt keeps the attempt and drops those beyond the latest 20.
func (db *DB) RecordWebhookAttempt(ctx context.Context, a *tidings.WebhookAttempt) error {
	return db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error { return recordAttempt(ctx, tx, a) })
}

func recordAttempt(ctx context.Context, tx *sql.Tx, a *tidings.WebhookAttempt) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (webhook_id, message_id, event_id, attempt, status, error, duration_us, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.WebhookID, a.MessageID, a.EventID, a.Attempt, a.Status, a.Error,
		a.Duration.Microseconds(), ms(a.At)); err != nil {
		if isForeignKey(err) {
			return nil // the webhook was deleted meanwhile
		}
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_attempts WHERE webhook_id = ? AND id NOT IN
		(SELECT id FROM webhook_attempts WHERE webhook_id = ? ORDER BY id DESC LIMIT ?)`, a.WebhookID, a.WebhookID, maxAttemptsKept); err != nil {
		return err
	}
	return nil
}

// ListWebhookAttempts returns the webhook's latest attempts, newest first.
func (db *DB) ListWebhookAttempts(ctx context.Context, accountID int64, webhookID string) ([]*tidings.WebhookAttempt, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT a.webhook_id, a.message_id, a.event_id, a.attempt, a.status, a.error, a.duration_us, a.at
		FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
		WHERE w.account_id = ? AND a.webhook_id = ? ORDER BY a.id DESC LIMIT ?`, accountID, webhookID, maxAttemptsKept)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.WebhookAttempt{}
	for rows.Next() {
		a := &tidings.WebhookAttempt{}
		var us, at int64
		if err := rows.Scan(&a.WebhookID, &a.MessageID, &a.EventID, &a.Attempt, &a.Status, &a.Error, &us, &at); err != nil {
			return nil, err
		}
		a.Duration, a.At = time.Duration(us)*time.Microsecond, fromMS(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// FindEventByID returns an event of the account by its ID.
func (db *DB) FindEventByID(ctx context.Context, accountID int64, id string) (*tidings.Event, error) {
	var project string
	key, ok := idBytes(id)
	if !ok {
		return nil, tidings.EventNotFound("", id)
	}
	err := db.read.QueryRowContext(ctx, `SELECT p.name FROM events e JOIN projects p ON p.id = e.project_id
		WHERE e.id = ? AND p.account_id = ?`, key, accountID).Scan(&project)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.EventNotFound("", id)
	}
	if err != nil {
		return nil, err
	}
	return db.FindEvent(ctx, accountID, project, id)
}
