package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// eventColumns are what an eventRow scans, from events aliased e. The channel's name
// is looked up apart (a page has few channels), so that no join sways the plan.
const eventColumns = `e.id, e.channel_id, e.event, e.description, e.icon, e.notify, e.tags, e.parser, e.user_id, e.ts, e.created_at,
	e.priority, e.url, e.actions, e.thread_key, e.ack_by, e.ack_at`

// eventRow is one row of eventColumns as scanned, before it is made an event.
type eventRow struct {
	id                       []byte
	tags                     string
	channel, ts, created     int64
	priority                 int64
	url, actions, key, ackBy sql.NullString
	ackAt                    sql.NullInt64
}

// scan reads a row of eventColumns into r and ev.
func (r *eventRow) scan(s scanner, ev *tidings.Event) error {
	return s.Scan(&r.id, &r.channel, &ev.Event, &ev.Description, &ev.Icon, &ev.Notify, &r.tags, &ev.Parser, &ev.UserID,
		&r.ts, &r.created, &r.priority, &r.url, &r.actions, &r.key, &r.ackBy, &r.ackAt)
}

// fill completes ev from the row (all but its ID and channel name).
func (r *eventRow) fill(ev *tidings.Event) error {
	if err := ev.Tags.UnmarshalJSON([]byte(r.tags)); err != nil {
		return err
	}
	ev.Timestamp, ev.CreatedAt = fromMS(r.ts), fromMS(r.created)
	ev.Priority = tidings.Priority(r.priority)
	ev.URL, ev.ThreadKey = r.url.String, r.key.String
	ev.Actions = nil
	if r.actions.Valid {
		if err := json.Unmarshal([]byte(r.actions.String), &ev.Actions); err != nil {
			return fmt.Errorf("actions of an event: %w", err)
		}
	}
	ev.Ack = nil
	if r.ackBy.Valid {
		ev.Ack = &tidings.Ack{By: r.ackBy.String, At: fromMS(r.ackAt.Int64)}
	}
	return nil
}

// eventID is the row's event ID as text.
func (r *eventRow) eventID() (string, error) {
	if len(r.id) != 16 {
		return "", fmt.Errorf("event id of %d bytes", len(r.id))
	}
	return uuid.UUID(r.id).String(), nil
}

// intentValues are the stored url, actions and key of an accepted event: NULL for
// each it has none of, which costs a row nothing.
func intentValues(ev *tidings.Event) (url, actions, key any) {
	if ev.URL != "" {
		url = ev.URL
	}
	if len(ev.Actions) > 0 {
		b, _ := json.Marshal(ev.Actions)
		actions = string(b)
	}
	if ev.ThreadKey != "" {
		key = ev.ThreadKey
	}
	return url, actions, key
}
