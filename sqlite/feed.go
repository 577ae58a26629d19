package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// ListEvents returns a page of the project's events, newest first.
func (db *DB) ListEvents(ctx context.Context, accountID int64, q tidings.EventQuery) (*tidings.EventPage, error) {
	if err := q.CheckUsers(); err != nil {
		return nil, err
	}
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	if q.MaxPriority != 0 && q.MinPriority > q.MaxPriority {
		return &tidings.EventPage{Events: []*tidings.Event{}}, nil // priority:>urgent
	}
	var channelID, channelCount int64
	if q.Channel != "" {
		if channelID, err = db.channelID(ctx, p, q.Channel); err != nil {
			return nil, err
		}
		if channelCount, err = db.countChannel(ctx, channelID); err != nil {
			return nil, err
		}
	}
	var before *cursor
	if q.Before != "" {
		c := cursor{}
		id, ok := idBytes(q.Before)
		err := sql.ErrNoRows
		if ok {
			err = db.read.QueryRowContext(ctx, `SELECT ts, seq FROM events WHERE id = ? AND project_id = ?`, id, p.ID).Scan(&c.ts, &c.seq)
		}
		if errors.Is(err, sql.ErrNoRows) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no event %q in project %q", q.Before, q.Project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		before = &c
	}
	tags := make([]feedTag, 0, len(q.Tags))
	for _, t := range q.Tags {
		var ft feedTag
		err := db.read.QueryRowContext(ctx, `SELECT id, count FROM tags WHERE project_id = ? AND key = ? AND value = ?`,
			p.ID, t.Key, t.Value).Scan(&ft.id, &ft.count)
		if errors.Is(err, sql.ErrNoRows) {
			return &tidings.EventPage{Events: []*tidings.Event{}}, nil // no event has this tag
		}
		if err != nil {
			return nil, err
		}
		tags = append(tags, ft)
	}
	f := feedFilter{project: p.ID, channel: channelID, channelCount: channelCount, tags: tags, terms: q.Terms, users: q.Users,
		event: q.Event, since: msOrZero(q.Since), until: msOrZero(q.Until), before: before, limit: q.Limit + 1,
		minPriority: q.MinPriority, maxPriority: q.MaxPriority}
	f.terms = withEventWords(f.terms, q.Event)
	if f.priorityDrives, err = db.priorityDrives(ctx, f); err != nil {
		return nil, err
	}
	if len(f.terms) > 0 || len(f.users) > 0 {
		return db.searchEvents(ctx, p, f, q)
	}
	eq := listQuery(f)
	events, err := db.queryEvents(ctx, p, eq.sql, eq.args...)
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

// priorityDrives reports whether a page with tags and a priority range that the
// priority index holds reads fewer rows walking that index than its rarest tag's: it
// counts the range's rows of the index up to the tag's count, a bounded read.
func (db *DB) priorityDrives(ctx context.Context, f feedFilter) (bool, error) {
	if len(f.tags) == 0 || f.priorityArms() == nil {
		return false, nil
	}
	rarest := f.tags[0].count
	for _, t := range f.tags {
		rarest = min(rarest, t.count)
	}
	c := f
	c.tags, c.before, c.event, c.since, c.until, c.columns, c.limit = nil, nil, "", 0, 0, "1", int(rarest)+1
	q := priorityQuery(c, c.priorityArms())
	var n int64
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+q.sql+`)`, q.args...).Scan(&n); err != nil {
		return false, err
	}
	return n <= rarest, nil
}

// withEventWords adds the words of an event name filter to a search's terms, as one
// phrase: no index holds event names, but the full-text index holds their words, so
// that a page of a rare name reads its candidates there, within the search's budget,
// rather than walking the whole project. The name itself is checked exactly on each
// event read. A name without words (only symbols) is checked on the feed's walk.
func withEventWords(terms []tidings.Term, event string) []tidings.Term {
	words := tidings.SearchWords(event)
	if len(words) == 0 {
		return terms
	}
	return append(slices.Clip(terms), tidings.Term{Words: words})
}

// msOrZero is t in unix ms, 0 for the zero time (an open end of a range).
func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return ms(t)
}

// queryEvents runs a query of eventColumns over the project's events.
func (db *DB) queryEvents(ctx context.Context, p *tidings.Project, query string, args ...any) ([]*tidings.Event, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.Event{}
	channels := map[int64]string{}
	var channelOf []int64
	for rows.Next() {
		ev := &tidings.Event{Project: p.Name}
		var r eventRow
		if err := r.scan(rows, ev); err != nil {
			return nil, err
		}
		if ev.ID, err = r.eventID(); err != nil {
			return nil, err
		}
		if err := r.fill(ev); err != nil {
			return nil, err
		}
		channel := r.channel
		channels[channel] = ""
		channelOf = append(channelOf, channel)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for id := range channels {
		var name string
		if err := db.read.QueryRowContext(ctx, `SELECT name FROM channels WHERE id = ?`, id).Scan(&name); err != nil {
			return nil, err
		}
		channels[id] = name
	}
	for i, ev := range out {
		ev.Channel = channels[channelOf[i]]
	}
	return out, nil
}

// idBytes is an event ID as stored: the UUID's 16 bytes.
func idBytes(id string) ([]byte, bool) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, false
	}
	return u[:], true
}

// FindEvent returns one event of the account's project.
func (db *DB) FindEvent(ctx context.Context, accountID int64, project, id string) (*tidings.Event, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	notFound := tidings.EventNotFound(project, id)
	key, ok := idBytes(id)
	if !ok {
		return nil, notFound
	}
	evs, err := db.queryEvents(ctx, p, `SELECT `+eventColumns+` FROM events e WHERE e.id = ? AND e.project_id = ?`, key, p.ID)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, notFound
	}
	return evs[0], nil
}

// afterQuery selects the project's events accepted after the event with ID after
// (which need not exist: a live feed may start from a time's floor ID), oldest first.
// IDs are UUIDv7 made by the single writer in the order it inserts, so ID order is seq
// order: the first ID above after gives the seq to start from, and the scan walks the
// table's own key from there, whatever the project's size. (The unary + keeps SQLite
// from walking the project's index instead.)
func afterQuery(columns string, after []byte, project int64, limit int) eventQuery {
	return eventQuery{`SELECT ` + columns + ` FROM events e
		WHERE e.seq >= (SELECT seq FROM events WHERE id > ? ORDER BY id LIMIT 1) AND +e.project_id = ?
		ORDER BY e.seq LIMIT ?`, []any{after, project, limit}}
}

// EventsAfter returns events accepted after the event with ID after, oldest first.
func (db *DB) EventsAfter(ctx context.Context, accountID int64, project, after string, limit int) ([]*tidings.Event, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	key, ok := idBytes(after)
	if !ok {
		return []*tidings.Event{}, nil
	}
	q := afterQuery(eventColumns, key, p.ID, limit)
	return db.queryEvents(ctx, p, q.sql, q.args...)
}
