package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

var _ tidings.IntentStore = (*DB)(nil)

// actionNotFound is a press of an action the event does not have, or has as a URL
// action (only id actions are pressed).
func actionNotFound(eventID, actionID string) error {
	return tidings.Errorf(tidings.ENotFound, "event %q has no action with id %q", eventID, actionID)
}

// pressNotFound is an unknown press of the account.
func pressNotFound(id string) error {
	return tidings.Errorf(tidings.ENotFound, "no press %q in this account", id)
}

// sqlAccountEvent reads what acknowledging or pressing needs of an event of the
// account: a project of another account hides its events.
const sqlAccountEvent = `SELECT p.name, e.actions, e.ack_by FROM events e JOIN projects p ON p.id = e.project_id
	WHERE e.id = ? AND p.account_id = ?`

// AcknowledgeEvent records the first acknowledgement of an event, ends its pending
// repeats and pushes, and queues its DeliverAck job, in one transaction.
func (db *DB) AcknowledgeEvent(ctx context.Context, accountID int64, eventID, by string, at time.Time) (*tidings.Event, bool, error) {
	key, ok := idBytes(eventID)
	if !ok {
		return nil, false, tidings.EventNotFound("", eventID)
	}
	id := uuid.UUID(key).String()
	var project string
	first := false
	err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		first = false
		var actions, ackBy sql.NullString
		err := tx.QueryRowContext(ctx, sqlAccountEvent, key, accountID).Scan(&project, &actions, &ackBy)
		if errors.Is(err, sql.ErrNoRows) {
			project = ""
			return nil
		}
		if err != nil || ackBy.Valid {
			return err // acknowledged already: the first stays, nothing is queued
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET ack_by = ?, ack_at = ? WHERE id = ?`, by, ms(at), key); err != nil {
			return err
		}
		// No repeat, no push and no escalation of the event is sent after this commits:
		// a runner that holds one of them now finds it gone (ReplaceDelivery adds
		// nothing then).
		if _, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE event_id = ? AND kind IN (?, ?, ?)`,
			id, tidings.DeliverRepeat, tidings.DeliverPush, tidings.DeliverEscalate); err != nil {
			return err
		}
		first = true
		return insertDelivery(ctx, tx, &tidings.Delivery{Kind: tidings.DeliverAck, AccountID: accountID, EventID: id,
			MessageID: "ack-" + id, NextAt: at, CreatedAt: db.stamp()})
	})
	if err != nil {
		return nil, false, err
	}
	if project == "" {
		return nil, false, tidings.EventNotFound("", eventID)
	}
	if first {
		db.notifyOutbox()
	}
	ev, err := db.FindEvent(ctx, accountID, project, id)
	if err != nil {
		return nil, false, err
	}
	return ev, first, nil
}

// PressAction records a press of an event's id action with its DeliverPress job, and
// keeps the event's newest MaxPresses presses, in one transaction.
func (db *DB) PressAction(ctx context.Context, p *tidings.ActionPress) (*tidings.Event, error) {
	key, ok := idBytes(p.EventID)
	if !ok {
		return nil, tidings.EventNotFound("", p.EventID)
	}
	id := uuid.UUID(key).String()
	if p.ID == "" {
		p.ID = tidings.NewID("press_")
	}
	if p.At.IsZero() {
		p.At = db.stamp()
	}
	var project string
	err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var actions, ackBy sql.NullString
		err := tx.QueryRowContext(ctx, sqlAccountEvent, key, p.AccountID).Scan(&project, &actions, &ackBy)
		if errors.Is(err, sql.ErrNoRows) {
			return tidings.EventNotFound("", p.EventID)
		}
		if err != nil {
			return err
		}
		ev := &tidings.Event{ID: id}
		if actions.Valid {
			if err := json.Unmarshal([]byte(actions.String), &ev.Actions); err != nil {
				return err
			}
		}
		a, ok := ev.ActionByID(p.ActionID)
		if !ok {
			return actionNotFound(p.EventID, p.ActionID)
		}
		p.Label = a.Label
		if _, err := tx.ExecContext(ctx, `INSERT INTO event_presses (id, account_id, event_id, action_id, label, by, via, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, p.AccountID, key, p.ActionID, p.Label, p.By, p.Via, ms(p.At)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM event_presses WHERE event_id = ?1 AND rowid NOT IN
			(SELECT rowid FROM event_presses WHERE event_id = ?1 ORDER BY at DESC, rowid DESC LIMIT ?2)`, key, tidings.MaxPresses); err != nil {
			return err
		}
		return insertDelivery(ctx, tx, &tidings.Delivery{Kind: tidings.DeliverPress, AccountID: p.AccountID, EventID: id,
			MessageID: "press-" + p.ID, Ref: p.ID, NextAt: p.At, CreatedAt: db.stamp()})
	})
	if err != nil {
		return nil, err
	}
	db.notifyOutbox()
	p.EventID = id
	return db.FindEvent(ctx, p.AccountID, project, id)
}

const pressColumns = `id, account_id, event_id, action_id, label, by, via, at`

func scanPress(s scanner) (*tidings.ActionPress, error) {
	p := &tidings.ActionPress{}
	var event []byte
	var at int64
	if err := s.Scan(&p.ID, &p.AccountID, &event, &p.ActionID, &p.Label, &p.By, &p.Via, &at); err != nil {
		return nil, err
	}
	if len(event) == 16 {
		p.EventID = uuid.UUID(event).String()
	}
	p.At = fromMS(at)
	return p, nil
}

// ListPresses returns the presses of an event of the account, oldest first.
func (db *DB) ListPresses(ctx context.Context, accountID int64, eventID string) ([]*tidings.ActionPress, error) {
	out := []*tidings.ActionPress{}
	key, ok := idBytes(eventID)
	if !ok {
		return out, nil
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+pressColumns+` FROM event_presses
		WHERE event_id = ? AND account_id = ? ORDER BY at, rowid`, key, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanPress(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// FindPress returns a press of the account.
func (db *DB) FindPress(ctx context.Context, accountID int64, id string) (*tidings.ActionPress, error) {
	p, err := scanPress(db.read.QueryRowContext(ctx, `SELECT `+pressColumns+` FROM event_presses WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pressNotFound(id)
	}
	return p, err
}

// Versions returns the events of a channel with a key, newest first by acceptance,
// from the partial index of keys (events_thread); limit <= 0 returns only the count.
func (db *DB) Versions(ctx context.Context, accountID int64, project string, t tidings.Thread, limit int) ([]*tidings.Event, int, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, 0, err
	}
	if t.Key == "" {
		return []*tidings.Event{}, 0, nil
	}
	var channel int64
	err = db.read.QueryRowContext(ctx, sqlFindChannel, p.ID, t.Channel).Scan(&channel)
	if errors.Is(err, sql.ErrNoRows) {
		return []*tidings.Event{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE channel_id = ? AND thread_key = ?`, channel, t.Key).Scan(&n); err != nil {
		return nil, 0, err
	}
	if limit <= 0 || n == 0 {
		return []*tidings.Event{}, n, nil
	}
	evs, err := db.queryEvents(ctx, p, `SELECT `+eventColumns+` FROM events e WHERE e.channel_id = ? AND e.thread_key = ?
		ORDER BY e.seq DESC LIMIT ?`, channel, t.Key, limit)
	return evs, n, err
}

// SetRepeatUrgent sets a project's escalation of urgent events (kept in whole seconds).
func (db *DB) SetRepeatUrgent(ctx context.Context, accountID int64, project string, every time.Duration, times int) error {
	if err := tidings.CheckRepeatUrgent(every, times); err != nil {
		return err
	}
	res, err := db.write.ExecContext(ctx, `UPDATE projects SET repeat_urgent_every = ?, repeat_urgent_times = ? WHERE account_id = ? AND name = ?`,
		int64(every/time.Second), times, accountID, project)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.ProjectNotFound(project)
	}
	return nil
}
