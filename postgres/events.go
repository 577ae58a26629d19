package postgres

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
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

const (
	eventFields  = `e.id, c.name, e.event, e.description, e.icon, e.notify, e.tags, e.parser, e.user_id, e.ts, e.created_at`
	eventFrom    = ` FROM events e JOIN channels c ON c.id = e.channel_id`
	eventColumns = eventFields + eventFrom
)

func scanEvent(project string, extra ...any) func(pgx.Row) (*tidings.Event, error) {
	return func(r pgx.Row) (*tidings.Event, error) {
		ev := &tidings.Event{Project: project}
		var tags string
		var ts, created int64
		if err := r.Scan(append([]any{&ev.ID, &ev.Channel, &ev.Event, &ev.Description, &ev.Icon, &ev.Notify, &tags,
			&ev.Parser, &ev.UserID, &ts, &created}, extra...)...); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &ev.Tags); err != nil {
			return nil, err
		}
		ev.Timestamp, ev.CreatedAt = fromMS(ts), fromMS(created)
		return ev, nil
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

// ListEvents returns a page of the project's events, newest first.
func (db *DB) ListEvents(ctx context.Context, accountID int64, q tidings.EventQuery) (*tidings.EventPage, error) {
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	args := []any{p.ID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sb.WriteString(`SELECT ` + eventColumns + ` WHERE e.project_id = $1`)
	if q.Channel != "" {
		channelID, err := db.channelID(ctx, p, q.Channel)
		if err != nil {
			return nil, err
		}
		sb.WriteString(` AND e.channel_id = ` + arg(channelID))
	}
	for _, t := range q.Tags {
		sb.WriteString(` AND EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = e.id AND t.key = ` + arg(t.Key) +
			` AND t.value = ` + arg(t.Value) + `)`)
	}
	if q.Text != "" {
		like := arg("%" + escapeLike(q.Text) + "%")
		// ILIKE folds case like SQLite's LIKE does (ASCII and beyond).
		sb.WriteString(` AND (e.event ILIKE ` + like + ` OR e.description ILIKE ` + like + `)`)
	}
	if q.Before != "" {
		var ts int64
		err := db.row(ctx, `SELECT ts FROM events WHERE id = $1 AND project_id = $2`, q.Before, p.ID).Scan(&ts)
		if noRows(err) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no event %q in project %q", q.Before, q.Project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		t, id := arg(ts), arg(q.Before)
		sb.WriteString(` AND (e.ts < ` + t + ` OR (e.ts = ` + t + ` AND e.id < ` + id + `))`)
	}
	sb.WriteString(` ORDER BY e.ts DESC, e.id DESC LIMIT ` + arg(q.Limit+1))
	events, err := query(ctx, db.pool, scanEvent(q.Project), sb.String(), args...)
	if err != nil {
		return nil, err
	}
	page := &tidings.EventPage{Events: events}
	if len(page.Events) > q.Limit {
		page.Events = page.Events[:q.Limit]
		page.Next = page.Events[q.Limit-1].ID
	}
	return page, nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// FindEvent returns one event of the account's project.
func (db *DB) FindEvent(ctx context.Context, accountID int64, project, id string) (*tidings.Event, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	evs, err := query(ctx, db.pool, scanEvent(project), `SELECT `+eventColumns+` WHERE e.project_id = $1 AND e.id = $2`, p.ID, id)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, tidings.Errorf(tidings.ENotFound, "no event %q in project %q", id, project)
	}
	return evs[0], nil
}

// EventsAfter returns events accepted after the event with ID after, oldest first.
// IDs are UUIDv7: their order is the order of acceptance (across instances, as far as
// their clocks agree).
func (db *DB) EventsAfter(ctx context.Context, accountID int64, project, after string, limit int) ([]*tidings.Event, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	return query(ctx, db.pool, scanEvent(project),
		`SELECT `+eventColumns+` WHERE e.project_id = $1 AND e.id > $2 ORDER BY e.id LIMIT $3`, p.ID, after, limit)
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
