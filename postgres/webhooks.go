package postgres

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// maxAttemptsKept is how many attempts of a webhook the UI can list.
const maxAttemptsKept = 20

const webhookColumns = `w.id, w.account_id, p.name, coalesce(c.name, ''), w.url, w.format, w.events, w.name, w.secret, w.chat_id, w.user_key, w.created_at
	FROM webhooks w JOIN projects p ON p.id = w.project_id LEFT JOIN channels c ON c.id = w.channel_id`

func scanWebhook(r pgx.Row) (*tidings.Webhook, error) {
	w := &tidings.Webhook{}
	var created int64
	err := r.Scan(&w.ID, &w.AccountID, &w.Project, &w.Channel, &w.URL, &w.Format, &w.Events, &w.Name, &w.Secret, &w.ChatID, &w.UserKey, &created)
	w.CreatedAt = fromMS(created)
	return w, err
}

func (db *DB) queryWebhooks(ctx context.Context, where string, args ...any) ([]*tidings.Webhook, error) {
	return query(ctx, db.pool, scanWebhook, `SELECT `+webhookColumns+` WHERE `+where+` ORDER BY w.created_at, w.seq`, args...)
}

// CreateWebhook stores w in the account's project (and channel).
func (db *DB) CreateWebhook(ctx context.Context, accountID int64, w *tidings.Webhook) error {
	p, err := findProject(ctx, db.pool, accountID, w.Project)
	if err != nil {
		return err
	}
	var channel *int64
	if w.Channel != "" {
		id, err := db.channelID(ctx, p, w.Channel)
		if err != nil {
			return err
		}
		channel = &id
	}
	w.AccountID = accountID
	w.CreatedAt = db.stamp()
	_, err = db.exec(ctx, `INSERT INTO webhooks (id, account_id, project_id, channel_id, url, format, events, name, secret, chat_id, user_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		w.ID, accountID, p.ID, channel, w.URL, w.Format, w.Events, w.Name, w.Secret, w.ChatID, w.UserKey, ms(w.CreatedAt))
	return err
}

// ListWebhooks returns the account's webhooks.
func (db *DB) ListWebhooks(ctx context.Context, accountID int64) ([]*tidings.Webhook, error) {
	return db.queryWebhooks(ctx, `w.account_id = $1`, accountID)
}

// FindWebhook returns one webhook of the account.
func (db *DB) FindWebhook(ctx context.Context, accountID int64, id string) (*tidings.Webhook, error) {
	ws, err := db.queryWebhooks(ctx, `w.account_id = $1 AND w.id = $2`, accountID, id)
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
	return db.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhooks WHERE account_id = $1 AND id = $2`, accountID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return tidings.WebhookNotFound(id)
		}
		_, err = tx.Exec(ctx, `DELETE FROM deliveries WHERE target = $1`, id)
		return err
	})
}

// WebhooksFor returns the project's webhooks for every channel and for this one.
func (db *DB) WebhooksFor(ctx context.Context, accountID int64, project, channel string) ([]*tidings.Webhook, error) {
	return db.queryWebhooks(ctx, `w.account_id = $1 AND p.name = $2 AND (w.channel_id IS NULL OR c.name = $3)`,
		accountID, project, channel)
}

// RecordWebhookAttempt keeps the attempt and drops those beyond the latest 20.
func (db *DB) RecordWebhookAttempt(ctx context.Context, a *tidings.WebhookAttempt) error {
	return db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error {
		// A webhook deleted meanwhile inserts nothing (no error that would spoil the batch).
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (webhook_id, message_id, event_id, attempt, status, error, duration_us, at)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1)`,
			a.WebhookID, a.MessageID, a.EventID, a.Attempt, a.Status, a.Error, a.Duration.Microseconds(), ms(a.At)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM webhook_attempts WHERE webhook_id = $1 AND id NOT IN
			(SELECT id FROM webhook_attempts WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2)`, a.WebhookID, maxAttemptsKept)
		return err
	})
}

// ListWebhookAttempts returns the webhook's latest attempts, newest first.
func (db *DB) ListWebhookAttempts(ctx context.Context, accountID int64, webhookID string) ([]*tidings.WebhookAttempt, error) {
	return query(ctx, db.pool, func(r pgx.Row) (*tidings.WebhookAttempt, error) {
		a := &tidings.WebhookAttempt{}
		var us, at int64
		err := r.Scan(&a.WebhookID, &a.MessageID, &a.EventID, &a.Attempt, &a.Status, &a.Error, &us, &at)
		a.Duration, a.At = time.Duration(us)*time.Microsecond, fromMS(at)
		return a, err
	}, `SELECT a.webhook_id, a.message_id, a.event_id, a.attempt, a.status, a.error, a.duration_us, a.at
		FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
		WHERE w.account_id = $1 AND a.webhook_id = $2 ORDER BY a.id DESC LIMIT $3`, accountID, webhookID, maxAttemptsKept)
}

// FindEventByID returns an event of the account by its ID.
func (db *DB) FindEventByID(ctx context.Context, accountID int64, id string) (*tidings.Event, error) {
	evs, err := db.eventsByID(ctx, `e.id = $1 AND p.account_id = $2`, id, accountID)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, tidings.EventNotFound("", id)
	}
	return evs[0].ev, nil
}

const sqlInsertDelivery = `INSERT INTO deliveries (kind, account_id, event_id, target, message_id, attempts, count, ref, next_at, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`

func insertDelivery(ctx context.Context, x querier, d *tidings.Delivery) error {
	_, err := x.Exec(ctx, sqlInsertDelivery, d.Kind, d.AccountID, d.EventID, d.Target, d.MessageID, d.Attempts, d.Count,
		d.Ref, ms(d.NextAt), ms(d.CreatedAt))
	return err
}

// EnqueueDelivery adds a job to the outbox.
func (db *DB) EnqueueDelivery(ctx context.Context, d *tidings.Delivery) error {
	if d.CreatedAt.IsZero() {
		d.CreatedAt = db.stamp()
	}
	if d.NextAt.IsZero() {
		d.NextAt = d.CreatedAt
	}
	err := mapErr(insertDelivery(ctx, db.pool, d))
	if err == nil {
		db.notifyOutbox()
	}
	return err
}

// ClaimDeliveries leases due jobs. Rows another instance is claiming are skipped
// (FOR UPDATE SKIP LOCKED), and a claimed job is leased: no job is sent by two
// instances at once, and one whose claimer died is due again when its lease ends.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, kinds ...string) ([]*tidings.Delivery, error) {
	kindIs := ""
	if len(kinds) > 0 {
		kindIs = ` AND kind = ANY($4)`
	} else {
		kinds = nil
		kindIs = ` AND $4::text[] IS NULL`
	}
	var due bool
	if err := db.row(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE next_at <= $1 AND leased_until <= $1`+
		strings.ReplaceAll(kindIs, "$4", "$2")+`)`, ms(now), kinds).Scan(&due); err != nil || !due {
		return nil, err
	}
	out, err := query(ctx, db.pool, func(r pgx.Row) (*tidings.Delivery, error) {
		d := &tidings.Delivery{}
		var next, created int64
		err := r.Scan(&d.ID, &d.Kind, &d.AccountID, &d.EventID, &d.Target, &d.MessageID, &d.Attempts, &d.Count, &d.Ref, &next, &created)
		d.NextAt, d.CreatedAt = fromMS(next), fromMS(created)
		return d, err
	}, `UPDATE deliveries SET leased_until = $1
		WHERE id IN (SELECT id FROM deliveries WHERE next_at <= $2 AND leased_until <= $2`+kindIs+`
		  ORDER BY next_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id, kind, account_id, event_id, target, message_id, attempts, count, ref, next_at, created_at`,
		ms(now.Add(lease)), ms(now), limit, kinds)
	slices.SortFunc(out, func(a, b *tidings.Delivery) int { return cmp.Or(a.NextAt.Compare(b.NextAt), cmp.Compare(a.ID, b.ID)) })
	return out, err
}

// ReplaceDelivery deletes job id and adds jobs, in one transaction; a job already gone,
// or whose event is, adds nothing, and neither does a push, repeat or escalation of its
// event once the event is acknowledged (AcknowledgeEvent deleted those already
// pending), nor an escalation of an acknowledged event (neither jobs nor records).
// The job's event is locked first: a deletion (which
// locks its events before their jobs) then waits for the jobs added here and takes them
// along. An event locked already, most likely by its deletion, is not waited for (the
// batch's other jobs would wait too, and a deletion of its channel could wait for the
// batch in turn): the job is left as it is, claimed again when its lease runs out.
func (db *DB) ReplaceDelivery(ctx context.Context, id int64, jobs []*tidings.Delivery, records []*tidings.PushRecord) error {
	added := false
	err := db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error {
		added = false
		var kind, eventID string
		err := tx.QueryRow(ctx, `SELECT kind, event_id FROM deliveries WHERE id = $1`, id).Scan(&kind, &eventID)
		if noRows(err) {
			return nil
		}
		if err != nil {
			return err
		}
		acked := false
		if slices.Contains(eventDeliveries, kind) {
			err := tx.QueryRow(ctx, `SELECT ack_by IS NOT NULL FROM events WHERE id = $1 FOR SHARE SKIP LOCKED`, eventID).Scan(&acked)
			if noRows(err) {
				var exists bool
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1)`, eventID).Scan(&exists); err != nil || exists {
					return err
				}
				_, err = tx.Exec(ctx, `DELETE FROM deliveries WHERE id = $1`, id)
				return err
			}
			if err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `DELETE FROM deliveries WHERE id = $1`, id)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		if acked && kind == tidings.DeliverEscalate {
			return nil // acknowledged since the escalation read its event: it is over, nobody more is told
		}
		for _, d := range jobs {
			if acked && d.EventID == eventID && (d.Kind == tidings.DeliverRepeat || d.Kind == tidings.DeliverPush || d.Kind == tidings.DeliverEscalate) {
				continue // the event's acknowledgement has ended its pushes and its escalation: one expanded after it adds none
			}
			added = true
			if err := insertDelivery(ctx, tx, d); err != nil {
				return err
			}
		}
		return recordPushes(ctx, tx, records)
	})
	if err == nil && added {
		db.notifyOutbox()
	}
	return err
}

// eventDeliveries are the outbox's kinds whose event_id names an event (a webhook's
// test names none).
var eventDeliveries = []string{tidings.DeliverEvent, tidings.DeliverWebhook, tidings.DeliverPush,
	tidings.DeliverRepeat, tidings.DeliverAck, tidings.DeliverPress,
	tidings.DeliverWebhookAck, tidings.DeliverWebhookPress, tidings.DeliverPushAck, tidings.DeliverMail, tidings.DeliverEscalate}

// eventDeliveryKinds is eventDeliveries as an SQL list.
const eventDeliveryKinds = `'` + tidings.DeliverEvent + `', '` + tidings.DeliverWebhook + `', '` + tidings.DeliverPush +
	`', '` + tidings.DeliverRepeat + `', '` + tidings.DeliverAck + `', '` + tidings.DeliverPress +
	`', '` + tidings.DeliverWebhookAck + `', '` + tidings.DeliverWebhookPress + `', '` + tidings.DeliverPushAck +
	`', '` + tidings.DeliverMail + `', '` + tidings.DeliverEscalate + `'`

// sqlDropOrphanDeliveries deletes the account's pending deliveries whose event is gone:
// those of a deleted project's or channel's events, which foreign keys do not reach
// (deliveries name their event by its text id). It reads the account's outbox, which is
// small, not the events deleted.
const sqlDropOrphanDeliveries = `DELETE FROM deliveries d WHERE d.account_id = $1 AND d.kind IN (` + eventDeliveryKinds + `)
	AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)`

// FinishDelivery deletes a finished job.
func (db *DB) FinishDelivery(ctx context.Context, id int64) error {
	return db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM deliveries WHERE id = $1`, id)
		return err
	})
}

// RetryDelivery schedules a job again and releases its lease.
func (db *DB) RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time) error {
	return db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE deliveries SET attempts = $1, next_at = $2, leased_until = 0 WHERE id = $3`,
			attempts, ms(next), id)
		return err
	})
}

// PendingDeliveries counts the outbox.
func (db *DB) PendingDeliveries(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest *int64
	err := db.row(ctx, `SELECT count(*), min(created_at) FROM deliveries`).Scan(&n, &oldest)
	return n, fromNullMS(oldest), err
}

// OutboxSignal is told (without blocking) whenever jobs may have been added to the
// outbox, here or, through the relay, on another instance.
func (db *DB) OutboxSignal() <-chan struct{} { return db.outbox }

func (db *DB) notifyOutbox() {
	select {
	case db.outbox <- struct{}{}:
	default:
	}
}
