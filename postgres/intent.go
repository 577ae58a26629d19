package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// The store of acknowledgements, presses, escalation settings and versions of a key
// (tidings.IntentStore).

// findAccountEvent reads an event of the account in x, with lock appended (" FOR SHARE OF
// e" or ""). Errors: ENotFound.
func findAccountEvent(ctx context.Context, x querier, accountID int64, id, lock string) (*tidings.Event, error) {
	var project string
	scan := scanEvent("", &project)
	evs, err := query(ctx, x, func(r pgx.Row) (*tidings.Event, error) {
		ev, err := scan(r)
		if err == nil {
			ev.Project = project
		}
		return ev, err
	}, `SELECT `+eventFields+`, p.name`+eventFrom+` JOIN projects p ON p.id = e.project_id
		WHERE e.id = $1 AND p.account_id = $2`+lock, id, accountID)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, tidings.EventNotFound("", id)
	}
	return evs[0], nil
}

// AcknowledgeEvent records the first acknowledgement of an event, and deletes its
// pending pushes, repeats and escalation (DeliverEscalate). The conditional
// UPDATE makes the first of racing acknowledgements the only one, and it locks the
// event's row: a ReplaceDelivery of one of its jobs that holds the row (FOR SHARE)
// commits first, and the jobs it added are then seen, and deleted, by the DELETE
// below (a statement of its own, so with a snapshot taken after that commit); one that
// comes later skips the locked row and leaves its job, which this transaction deletes.
func (db *DB) AcknowledgeEvent(ctx context.Context, accountID int64, eventID, by string, at time.Time) (*tidings.Event, bool, error) {
	var ev *tidings.Event
	first := false
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		first = false
		tag, err := tx.Exec(ctx, `UPDATE events e SET ack_by = $3, ack_at = $4 FROM projects p
			WHERE e.id = $1 AND p.id = e.project_id AND p.account_id = $2 AND e.ack_by IS NULL`,
			eventID, accountID, by, ms(at))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			first = true
			if _, err := tx.Exec(ctx, `DELETE FROM deliveries WHERE event_id = $1 AND kind IN ($2, $3, $4)`,
				eventID, tidings.DeliverRepeat, tidings.DeliverPush, tidings.DeliverEscalate); err != nil {
				return err
			}
			if err := insertDelivery(ctx, tx, &tidings.Delivery{Kind: tidings.DeliverAck, AccountID: accountID, EventID: eventID,
				MessageID: "ack-" + eventID, NextAt: at, CreatedAt: db.stamp()}); err != nil {
				return err
			}
		}
		ev, err = findAccountEvent(ctx, tx, accountID, eventID, "")
		return err
	})
	if err != nil {
		return nil, false, mapErr(err)
	}
	if first {
		db.notifyOutbox()
	}
	return ev, first, nil
}

// PressAction records a press of one of the event's id actions and queues its
// DeliverPress job. The event's row is held (FOR SHARE) while the press is written: a
// deletion of the event waits for it and then takes the press and its job along.
func (db *DB) PressAction(ctx context.Context, p *tidings.ActionPress) (*tidings.Event, error) {
	if p.ID == "" {
		p.ID = tidings.NewID("press_")
	}
	if p.At.IsZero() {
		p.At = db.stamp()
	}
	p.At = p.At.UTC().Truncate(time.Millisecond)
	var ev *tidings.Event
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if ev, err = findAccountEvent(ctx, tx, p.AccountID, p.EventID, ` FOR SHARE OF e`); err != nil {
			return err
		}
		a, ok := ev.ActionByID(p.ActionID)
		if !ok {
			return tidings.Errorf(tidings.ENotFound, "event %q has no action %q", p.EventID, p.ActionID)
		}
		p.Label = a.Label
		if _, err := tx.Exec(ctx, `INSERT INTO event_presses (id, account_id, event_id, action_id, label, "by", via, at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.ID, p.AccountID, p.EventID, p.ActionID, p.Label, p.By, p.Via, ms(p.At)); err != nil {
			return err
		}
		if err := insertDelivery(ctx, tx, &tidings.Delivery{Kind: tidings.DeliverPress, AccountID: p.AccountID, EventID: p.EventID,
			MessageID: "press-" + p.ID, Ref: p.ID, NextAt: p.At, CreatedAt: db.stamp()}); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM event_presses WHERE event_id = $1 AND seq NOT IN
			(SELECT seq FROM event_presses WHERE event_id = $1 ORDER BY at DESC, seq DESC LIMIT $2)`, p.EventID, tidings.MaxPresses)
		return err
	})
	if err != nil {
		return nil, mapErr(err)
	}
	db.notifyOutbox()
	return ev, nil
}

const pressColumns = `id, account_id, event_id, action_id, label, "by", via, at FROM event_presses`

func scanPress(r pgx.Row) (*tidings.ActionPress, error) {
	p := &tidings.ActionPress{}
	var at int64
	err := r.Scan(&p.ID, &p.AccountID, &p.EventID, &p.ActionID, &p.Label, &p.By, &p.Via, &at)
	p.At = fromMS(at)
	return p, err
}

// ListPresses returns the presses of an event of the account, oldest first.
func (db *DB) ListPresses(ctx context.Context, accountID int64, eventID string) ([]*tidings.ActionPress, error) {
	return query(ctx, db.pool, scanPress, `SELECT `+pressColumns+` WHERE account_id = $1 AND event_id = $2 ORDER BY at, seq`,
		accountID, eventID)
}

// FindPress returns a press of the account.
func (db *DB) FindPress(ctx context.Context, accountID int64, id string) (*tidings.ActionPress, error) {
	p, err := scanPress(db.row(ctx, `SELECT `+pressColumns+` WHERE account_id = $1 AND id = $2`, accountID, id))
	if err != nil {
		return nil, notFound(err, tidings.Errorf(tidings.ENotFound, "no press %q", id))
	}
	return p, nil
}

// Versions returns the events of the channel with the key, newest first, from
// events_thread, and how many there are.
func (db *DB) Versions(ctx context.Context, accountID int64, project string, t tidings.Thread, limit int) ([]*tidings.Event, int, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, 0, err
	}
	var channelID int64
	err = db.row(ctx, sqlFindChannel, p.ID, t.Channel).Scan(&channelID)
	if noRows(err) || t.Key == "" {
		return nil, 0, nil // no such channel, or no key: no versions
	}
	if err != nil {
		return nil, 0, err
	}
	var n int
	if err := db.row(ctx, `SELECT count(*) FROM events WHERE channel_id = $1 AND thread_key = $2`, channelID, t.Key).Scan(&n); err != nil {
		return nil, 0, err
	}
	if limit <= 0 || n == 0 {
		return nil, n, nil
	}
	evs, err := query(ctx, db.pool, scanEvent(project), `SELECT `+eventColumns+`
		WHERE e.channel_id = $1 AND e.thread_key = $2 ORDER BY e.id DESC LIMIT $3`, channelID, t.Key, limit)
	return evs, n, err
}

// SetRepeatUrgent sets a project's escalation.
func (db *DB) SetRepeatUrgent(ctx context.Context, accountID int64, project string, every time.Duration, times int) error {
	if err := tidings.CheckRepeatUrgent(every, times); err != nil {
		return err
	}
	tag, err := db.exec(ctx, `UPDATE projects SET repeat_urgent_every = $1, repeat_urgent_times = $2 WHERE account_id = $3 AND name = $4`,
		int64(every/time.Second), times, accountID, project)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.ProjectNotFound(project)
	}
	return nil
}

var _ tidings.IntentStore = (*DB)(nil)
