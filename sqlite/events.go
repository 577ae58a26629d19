package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

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

func (b *batch) insertEvent(ctx context.Context, accountID int64, e *tidings.NewEvent) (*tidings.Event, error) {
	p, err := b.project(ctx, accountID, e.Project)
	if err != nil {
		return nil, err
	}
	channelID, err := b.channel(ctx, p, e.Channel)
	if err != nil {
		return nil, err
	}
	ev, err := e.Accept(b.now)
	if err != nil {
		return nil, err
	}
	tags, _ := json.Marshal(ev.Tags)
	if err := b.exec(ctx, sqlInsertEvent, ev.ID, p.ID, channelID, ev.Event, ev.Description, ev.Icon, ev.Notify,
		string(tags), ev.Parser, ev.UserID, ms(ev.Timestamp), ms(b.now)); err != nil {
		return nil, err
	}
	for _, t := range ev.Tags {
		if err := b.exec(ctx, sqlInsertTag, ev.ID, t.Key, t.Value); err != nil {
			return nil, err
		}
	}
	if err := b.outboxFor(ctx, accountID, p, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// ListEvents returns a page of the project's events, newest first.
func (db *DB) ListEvents(ctx context.Context, accountID int64, q tidings.EventQuery) (*tidings.EventPage, error) {
	p, err := findProject(ctx, db.read, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	args := []any{p.ID}
	sb.WriteString(`SELECT ` + eventColumns + ` WHERE e.project_id = ?`)
	if q.Channel != "" {
		channelID, err := db.channelID(ctx, p, q.Channel)
		if err != nil {
			return nil, err
		}
		sb.WriteString(` AND e.channel_id = ?`)
		args = append(args, channelID)
	}
	for _, t := range q.Tags {
		sb.WriteString(` AND EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = e.id AND t.key = ? AND t.value = ?)`)
		args = append(args, t.Key, t.Value)
	}
	if q.Text != "" {
		sb.WriteString(` AND (e.event LIKE ? ESCAPE '\' OR e.description LIKE ? ESCAPE '\')`)
		like := "%" + escapeLike(q.Text) + "%"
		args = append(args, like, like)
	}
	if q.Before != "" {
		var ts int64
		err := db.read.QueryRowContext(ctx, `SELECT ts FROM events WHERE id = ? AND project_id = ?`, q.Before, p.ID).Scan(&ts)
		if errors.Is(err, sql.ErrNoRows) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no event %q in project %q", q.Before, q.Project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		sb.WriteString(` AND (e.ts < ? OR (e.ts = ? AND e.id < ?))`)
		args = append(args, ts, ts, q.Before)
	}
	sb.WriteString(` ORDER BY e.ts DESC, e.id DESC LIMIT ?`)
	args = append(args, q.Limit+1)

	rows, err := db.read.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	events, err := scanEvents(rows, q.Project)
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

const eventColumns = `e.id, c.name, e.event, e.description, e.icon, e.notify, e.tags, e.parser, e.user_id, e.ts, e.created_at
	FROM events e JOIN channels c ON c.id = e.channel_id`

func scanEvents(rows *sql.Rows, project string) ([]*tidings.Event, error) {
	out := []*tidings.Event{}
	for rows.Next() {
		ev := &tidings.Event{Project: project}
		var tags string
		var ts, created int64
		if err := rows.Scan(&ev.ID, &ev.Channel, &ev.Event, &ev.Description, &ev.Icon, &ev.Notify, &tags,
			&ev.Parser, &ev.UserID, &ts, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(tags), &ev.Tags); err != nil {
			return nil, err
		}
		ev.Timestamp, ev.CreatedAt = fromMS(ts), fromMS(created)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// FindEvent returns one event of the account's project.
func (db *DB) FindEvent(ctx context.Context, accountID int64, project, id string) (*tidings.Event, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+eventColumns+` WHERE e.project_id = ? AND e.id = ?`, p.ID, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	evs, err := scanEvents(rows, project)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, tidings.Errorf(tidings.ENotFound, "no event %q in project %q", id, project)
	}
	return evs[0], nil
}

// EventsAfter returns events accepted after the event with ID after, oldest first.
// IDs are UUIDv7 made by the single writer, so their order is the commit order.
func (db *DB) EventsAfter(ctx context.Context, accountID int64, project, after string, limit int) ([]*tidings.Event, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+eventColumns+` WHERE e.project_id = ? AND e.id > ? ORDER BY e.id LIMIT ?`,
		p.ID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanEvents(rows, project)
}

// CountEventsAfter counts events accepted after the event with ID after, up to max.
func (db *DB) CountEventsAfter(ctx context.Context, accountID int64, project, after string, max int) (int, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return 0, err
	}
	var n int
	err = db.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM events WHERE project_id = ? AND id > ? LIMIT ?)`,
		p.ID, after, max).Scan(&n)
	return n, err
}

// CountEventsBy counts events per bucket from since on.
func (db *DB) CountEventsBy(ctx context.Context, accountID int64, project, channel string, since time.Time, bucket time.Duration) (map[time.Time]int, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return nil, err
	}
	width := bucket.Milliseconds()
	query := `SELECT (ts / ?) * ?, count(*) FROM events WHERE project_id = ? AND ts >= ?`
	args := []any{width, width, p.ID, ms(since)}
	if channel != "" {
		cid, err := db.channelID(ctx, p, channel)
		if err != nil {
			return nil, err
		}
		query += ` AND channel_id = ?`
		args = append(args, cid)
	}
	rows, err := db.read.QueryContext(ctx, query+` GROUP BY 1`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[time.Time]int{}
	for rows.Next() {
		var start int64
		var n int
		if err := rows.Scan(&start, &n); err != nil {
			return nil, err
		}
		out[fromMS(start)] = n
	}
	return out, rows.Err()
}
