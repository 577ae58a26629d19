package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// ListEvents returns a page of the project's events, newest first.
//
// The page is read, newest first, from the index of the smallest set among the
// project's events, the channel's and each filter tag's (tag_counts and event_counts
// say which is smallest), and every other condition is checked on the rows walked, so
// the scan stops at the page's end whatever the store's size.
func (db *DB) ListEvents(ctx context.Context, accountID int64, q tidings.EventQuery) (*tidings.EventPage, error) {
	if err := q.CheckUsers(); err != nil {
		return nil, err
	}
	q.Users = slices.Compact(slices.Sorted(slices.Values(q.Users))) // each user's index is read once
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	var channelID int64
	if q.Channel != "" {
		if channelID, err = db.channelID(ctx, p, q.Channel); err != nil {
			return nil, err
		}
	}
	if emptyPriority(q) {
		return &tidings.EventPage{}, nil // priority:>urgent: nothing matches
	}
	prio := priorityRange("e.priority", q.MinPriority, q.MaxPriority)
	var before *cursor
	if q.Before != "" {
		c := cursor{id: q.Before}
		err := db.row(ctx, `SELECT ts FROM events WHERE id = $1 AND project_id = $2`, q.Before, p.ID).Scan(&c.ts)
		if noRows(err) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no event %q in project %q", q.Before, q.Project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		before = &c
	}
	driver := -1 // index in q.Tags of the tag whose rows drive the scan
	if len(q.Tags) > 0 {
		counts, err := db.tagCounts(ctx, p.ID, q.Tags)
		if err != nil {
			return nil, err
		}
		for i, n := range counts {
			if n <= 0 {
				return &tidings.EventPage{}, nil // a tag no event has: nothing matches
			}
			if driver < 0 || n < counts[driver] {
				driver = i
			}
		}
		if channelID != 0 {
			var inChannel int64
			if err := db.row(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts WHERE channel_id = $1`, channelID).
				Scan(&inChannel); err != nil {
				return nil, err
			}
			if inChannel <= counts[driver] {
				driver = -1
			}
		}
	}
	var sqlText string
	var args []any
	terms := withNameWords(q.Terms, q.Event)
	if len(terms) > 0 || len(q.Users) > 0 {
		src, err := db.searchSource(ctx, p.ID, channelID, q.Tags, terms, q.Users)
		if err != nil {
			return nil, err
		}
		sqlText, args = searchQuery(p.ID, channelID, q.Event, prio, q.Tags, terms, q.Users, q.Since, q.Until, before, q.Limit+1, src)
	} else {
		sqlText, args = listQuery(p.ID, channelID, q.Event, prio, q.Tags, driver, q.Since, q.Until, before, q.Limit+1)
	}
	events, err := query(ctx, db.pool, scanEvent(q.Project), sqlText, args...)
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

// withNameWords adds to a search's terms the words of the event name it filters by,
// as one phrase: every event of that name has them (its name's words begin its search
// vector), so the answer is the same, and a rare name is found from the words' index
// instead of walking the project's events for it. Only a name of plain ASCII words
// adds them (the parser reads a quoted query word as it read the event's, "12e4x" as
// the phrase 12e4 x in both; other letters it may read otherwise than Go, by the
// database's locale); another name (or none) leaves the terms as they are.
func withNameWords(terms []tidings.Term, event string) []tidings.Term {
	words := tidings.SearchWords(event)
	if len(words) == 0 {
		return terms
	}
	for _, w := range words {
		if len(w) > 100 {
			return terms
		}
		for _, r := range w {
			if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
				return terms
			}
		}
	}
	return append(slices.Clip(terms), tidings.Term{Words: words})
}

// cursor is the position of a feed page's last event: newest first by (ts, id).
type cursor struct {
	ts int64
	id string
}

// tagCounts returns how many events of the project carry each tag (0 for none).
func (db *DB) tagCounts(ctx context.Context, project int64, tags []tidings.Tag) ([]int64, error) {
	keys, values := make([]string, len(tags)), make([]string, len(tags))
	for i, t := range tags {
		keys[i], values[i] = t.Key, t.Value
	}
	counts := make([]int64, len(tags))
	type tagCount struct {
		key, value string
		n          int64
	}
	rows, err := query(ctx, db.pool, func(r pgx.Row) (tagCount, error) {
		var c tagCount
		return c, r.Scan(&c.key, &c.value, &c.n)
	}, `SELECT key, value, n FROM tag_counts WHERE project_id = $1
		AND (key, value) IN (SELECT * FROM unnest($2::text[], $3::text[]))`, project, keys, values)
	if err != nil {
		return nil, err
	}
	for _, c := range rows {
		for i, t := range tags {
			if t.Key == c.key && t.Value == c.value {
				counts[i] = c.n
			}
		}
	}
	return counts, nil
}

// listQuery builds a feed page's query, read from the tag index when driver is the
// index of a tag in tags, else from the channel's or the project's feed index; event,
// when not "", keeps that event name's events only and prio (priorityRange's) the
// events of a priority (checked on the rows walked). It is built apart from running it
// so that a test can check its plan.
func listQuery(project, channel int64, event, prio string, tags []tidings.Tag, driver int, since, until time.Time, before *cursor, limit int) (string, []any) {
	var sb strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	order := ` ORDER BY e.ts DESC, e.id DESC`
	if driver >= 0 {
		t := tags[driver]
		sb.WriteString(`SELECT ` + eventFields + ` FROM event_tags d JOIN events e ON e.id = d.event_id
			JOIN channels c ON c.id = e.channel_id
			WHERE d.project_id = ` + arg(project) + ` AND d.key = ` + arg(t.Key) + ` AND d.value = ` + arg(t.Value) +
			` AND e.project_id = d.project_id`) // a row of the index never hands out another project's event
		if channel != 0 {
			sb.WriteString(` AND d.channel_id = ` + arg(channel))
		}
		if before != nil {
			sb.WriteString(` AND (d.ts, d.event_id) < (` + arg(before.ts) + `, ` + arg(before.id) + `)`)
		}
		timeRange(&sb, "d", since, until, arg)
		order = ` ORDER BY d.ts DESC, d.event_id DESC`
	} else {
		sb.WriteString(`SELECT ` + eventColumns)
		switch {
		case channel != 0 && prio != "":
			// The project too, so that the planner may read a page of a rare priority
			// from events_priority or events_channel_priority, whichever is cheaper.
			sb.WriteString(` WHERE e.channel_id = ` + arg(channel) + ` AND e.project_id = ` + arg(project))
		case channel != 0:
			// The channel is the project's: its own index alone reads the feed.
			sb.WriteString(` WHERE e.channel_id = ` + arg(channel))
		default:
			sb.WriteString(` WHERE e.project_id = ` + arg(project))
		}
		if before != nil {
			sb.WriteString(` AND (e.ts, e.id) < (` + arg(before.ts) + `, ` + arg(before.id) + `)`)
		}
		timeRange(&sb, "e", since, until, arg)
	}
	if event != "" {
		sb.WriteString(` AND e.event = ` + arg(event))
	}
	sb.WriteString(prio)
	for i, t := range tags {
		if i == driver {
			continue
		}
		// Checked on the event's own row (its tags as JSON), which the page reads anyway:
		// a lookup in event_tags per row walked cost a random read of a large index each
		// (0.3 s for a common tag in a rare channel at 10 million events; 8 ms this way).
		sb.WriteString(` AND (e.tags::jsonb ->> ` + arg(t.Key) + `) = ` + arg(t.Value))
	}
	sb.WriteString(order + ` LIMIT ` + arg(limit))
	return sb.String(), args
}

// timeRange bounds the scan's timestamps (col.ts) by a search's range.
func timeRange(sb *strings.Builder, col string, since, until time.Time, arg func(any) string) {
	if !since.IsZero() {
		sb.WriteString(` AND ` + col + `.ts >= ` + arg(ms(since)))
	}
	if !until.IsZero() {
		sb.WriteString(` AND ` + col + `.ts < ` + arg(ms(until)))
	}
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
		return nil, tidings.EventNotFound(project, id)
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
