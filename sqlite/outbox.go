package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

const sqlInsertDelivery = `INSERT OR IGNORE INTO deliveries (kind, account_id, event_id, target, message_id, attempts, count, next_at, created_at, ref)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// sqlProjectHasAllWebhook tells whether a project has a webhook that wants every event.
const sqlProjectHasAllWebhook = `SELECT EXISTS (SELECT 1 FROM webhooks WHERE project_id = ? AND events = 'all')`

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func insertDelivery(ctx context.Context, x execer, d *tidings.Delivery) error {
	_, err := x.ExecContext(ctx, sqlInsertDelivery, d.Kind, d.AccountID, d.EventID, d.Target, d.MessageID, d.Attempts, d.Count,
		ms(d.NextAt), ms(d.CreatedAt), d.Ref)
	return err
}

// outboxFor writes the event's delivery job in the batch's transaction when the event
// may go out: recent (a backfill never notifies) and either sent with notify or in a
// project with a webhook for every event.
func (b *batch) outboxFor(ctx context.Context, accountID int64, p *tidings.Project, ev *tidings.Event) error {
	if b.now.Sub(ev.Timestamp) > tidings.BackfillAge {
		return nil
	}
	if !ev.Notify {
		all, ok := b.allWebhooks[p.ID]
		if !ok {
			if err := b.queryRow(ctx, sqlProjectHasAllWebhook, p.ID).Scan(&all); err != nil {
				return err
			}
			b.allWebhooks[p.ID] = all
		}
		if !all {
			return nil
		}
	}
	b.deliveries++
	return b.exec(ctx, sqlInsertDelivery, tidings.DeliverEvent, accountID, ev.ID, "", "", 0, 0, ms(b.now), ms(b.now), "")
}

// EnqueueDelivery adds a job to the outbox.
func (db *DB) EnqueueDelivery(ctx context.Context, d *tidings.Delivery) error {
	if d.CreatedAt.IsZero() {
		d.CreatedAt = db.stamp()
	}
	if d.NextAt.IsZero() {
		d.NextAt = d.CreatedAt
	}
	err := insertDelivery(ctx, db.write, d)
	if err == nil {
		db.notifyOutbox()
	}
	return err
}

// ClaimDeliveries leases due jobs. The single writer serialises claims, so no job is
// leased twice at once. The outbox's writes go through the group committer: they
// share its transactions and fsyncs with ingest instead of taking turns with it.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, kinds ...string) ([]*tidings.Delivery, error) {
	kindIs, args := "", []any{ms(now), ms(now)}
	if len(kinds) > 0 {
		kindIs = ` AND kind IN (?` + strings.Repeat(`, ?`, len(kinds)-1) + `)`
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	// Nothing due (the common case) is a read, not a write.
	var due bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE next_at <= ? AND leased_until <= ?`+kindIs+`)`,
		args...).Scan(&due); err != nil || !due {
		return nil, err
	}
	var out []*tidings.Delivery
	err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE deliveries SET leased_until = ?
			WHERE id IN (SELECT id FROM deliveries WHERE next_at <= ? AND leased_until <= ?`+kindIs+`
			  ORDER BY next_at, id LIMIT ?)
			RETURNING id, kind, account_id, event_id, target, message_id, attempts, count, next_at, created_at, ref`,
			append(append([]any{ms(now.Add(lease))}, args...), limit)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d := &tidings.Delivery{}
			var next, created int64
			if err := rows.Scan(&d.ID, &d.Kind, &d.AccountID, &d.EventID, &d.Target, &d.MessageID, &d.Attempts, &d.Count, &next, &created, &d.Ref); err != nil {
				return err
			}
			d.NextAt, d.CreatedAt = fromMS(next), fromMS(created)
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		// out is not read: a caller that gave up (its context ended) is answered at
		// once, while the batch may still be filling it.
		return nil, err
	}
	slices.SortFunc(out, func(a, b *tidings.Delivery) int { return cmp.Or(a.NextAt.Compare(b.NextAt), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// ReplaceDelivery deletes job id and adds jobs, in one transaction; a job already gone
// adds nothing: its event was deleted while it was expanded (the deletion took the job,
// and jobs added now would outlive the event), or it was replaced already.
func (db *DB) ReplaceDelivery(ctx context.Context, id int64, jobs []*tidings.Delivery, records []*tidings.PushRecord) error {
	added := false
	err := db.inBatch(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := db.preparedIn(sqlTx)
		res, err := tx.ExecContext(ctx, sqlDeleteDelivery, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			added = false
			return nil
		}
		added = len(jobs) > 0
		for _, d := range jobs {
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

// FinishDelivery deletes a finished job.
func (db *DB) FinishDelivery(ctx context.Context, id int64) error {
	return db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := db.preparedIn(tx).ExecContext(ctx, sqlDeleteDelivery, id)
		return err
	})
}

// The statements of a delivery's end, prepared with the write path's: they run once per
// notification sent.
const (
	sqlDeleteDelivery = `DELETE FROM deliveries WHERE id = ?`
	sqlRetryDelivery  = `UPDATE deliveries SET attempts = ?, next_at = ?, leased_until = 0 WHERE id = ?`
)

// RetryDelivery schedules a job again and releases its lease.
func (db *DB) RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time) error {
	return db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := db.preparedIn(tx).ExecContext(ctx, sqlRetryDelivery, attempts, ms(next), id)
		return err
	})
}

// PendingDeliveries counts the outbox.
func (db *DB) PendingDeliveries(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT count(*), min(created_at) FROM deliveries`).Scan(&n, &oldest)
	return n, fromNullMS(oldest), err
}

// OutboxSignal is told (without blocking) whenever jobs are added to the outbox, so
// that a delivery runner need not wait for its next poll.
func (db *DB) OutboxSignal() <-chan struct{} { return db.outbox }

func (db *DB) notifyOutbox() {
	select {
	case db.outbox <- struct{}{}:
	default:
	}
}

func isForeignKey(err error) bool {
	return err != nil && strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

// ReleaseLeases makes every leased job due again. Only the one server that holds the
// data folder sends deliveries, so at its start any lease is a dead process's.
func (db *DB) ReleaseLeases(ctx context.Context) error {
	_, err := db.write.ExecContext(ctx, `UPDATE deliveries SET leased_until = 0 WHERE leased_until > 0`)
	return err
}
