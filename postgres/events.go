package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// PublishEvent records e once its batch is committed.
func (db *DB) PublishEvent(ctx context.Context, accountID int64, e *tidings.NewEvent) (*tidings.Event, error) {
	res, err := db.submit(ctx, &writeJob{accountID: accountID, event: e})
	if err != nil {
		return nil, err
	}
	return res.event, nil
}

// PublishEvents records a batch's events in one job of the group committer.
func (db *DB) PublishEvents(ctx context.Context, accountID int64, b *tidings.NewBatch) ([]tidings.Published, error) {
	res, err := db.submit(ctx, &writeJob{accountID: accountID, events: b})
	if err != nil {
		return nil, err
	}
	return res.published, nil
}

const (
	eventFields = `e.id, c.name, e.event, e.description, e.icon, e.notify, e.tags, e.parser, e.user_id, e.ts, e.created_at,
		e.priority, e.url, e.actions, e.thread_key, e.ack_by, e.ack_at`
	eventFrom    = ` FROM events e JOIN channels c ON c.id = e.channel_id`
	eventColumns = eventFields + eventFrom
)

func scanEvent(project string, extra ...any) func(pgx.Row) (*tidings.Event, error) {
	return func(r pgx.Row) (*tidings.Event, error) {
		ev := &tidings.Event{Project: project}
		var tags string
		var ts, created int64
		var in intentColumns
		if err := r.Scan(append([]any{&ev.ID, &ev.Channel, &ev.Event, &ev.Description, &ev.Icon, &ev.Notify, &tags,
			&ev.Parser, &ev.UserID, &ts, &created, &in.priority, &in.url, &in.actions, &in.key, &in.ackBy, &in.ackAt}, extra...)...); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &ev.Tags); err != nil {
			return nil, err
		}
		ev.Timestamp, ev.CreatedAt = fromMS(ts), fromMS(created)
		return ev, in.fill(ev)
	}
}

type accountEvent struct {
	account int64
	ev      *tidings.Event
}

// eventsByID reads events of any account with their account and project (the relay's
// reads: it publishes each to its own account only).
func (db *DB) eventsByID(ctx context.Context, where string, args ...any) ([]accountEvent, error) {
	return query(ctx, db.pool, func(r pgx.Row) (accountEvent, error) {
		var ae accountEvent
		var project string
		ev, err := scanEvent("", &ae.account, &project)(r)
		if err == nil {
			ev.Project = project
		}
		ae.ev = ev
		return ae, err
	}, `SELECT `+eventFields+`, p.account_id, p.name`+eventFrom+` JOIN projects p ON p.id = e.project_id WHERE `+where, args...)
}

// CountEventsAfter counts events accepted after the event with ID after, up to max.
func (db *DB) CountEventsAfter(ctx context.Context, accountID int64, project, after string, max int) (int, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return 0, err
	}
	var n int
	err = db.row(ctx, `SELECT count(*) FROM (SELECT 1 FROM events WHERE project_id = $1 AND id > $2 LIMIT $3) x`,
		p.ID, after, max).Scan(&n)
	return n, err
}

// CountEventsBy counts events per bucket from since on.
func (db *DB) CountEventsBy(ctx context.Context, accountID int64, project, channel string, since time.Time, bucket time.Duration) (map[time.Time]int, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	width, from := bucket.Milliseconds(), ms(since)
	// Whole hours from the start of an hour come from the hourly counts; anything finer
	// reads the events.
	q := `SELECT (ts / $1) * $1, count(*) FROM events WHERE project_id = $2 AND ts >= $3`
	if width > 0 && width%3_600_000 == 0 && from%3_600_000 == 0 {
		q = `SELECT (hour / $1) * $1, sum(n) FROM event_counts
			WHERE channel_id IN (SELECT id FROM channels WHERE project_id = $2) AND hour >= $3`
	}
	args := []any{width, p.ID, from}
	if channel != "" {
		cid, err := db.channelID(ctx, p, channel)
		if err != nil {
			return nil, err
		}
		q += ` AND channel_id = $4`
		args = append(args, cid)
	}
	type bucketCount struct {
		start int64
		n     int
	}
	rows, err := query(ctx, db.pool, func(r pgx.Row) (bucketCount, error) {
		var b bucketCount
		return b, r.Scan(&b.start, &b.n)
	}, q+` GROUP BY 1`, args...)
	if err != nil {
		return nil, err
	}
	out := map[time.Time]int{}
	for _, b := range rows {
		out[fromMS(b.start)] = b.n
	}
	return out, nil
}
