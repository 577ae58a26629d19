package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

var _ tidings.ChartStore = (*DB)(nil)

// ScanEvents calls fn with every event of the project that the feed lists for q, in no
// particular order, reading at most max candidate rows. The candidates come from one of
// two sources, each bounded before it is read:
//
//   - the time index of the project, its channel or its rarest tag, over [Since, Until):
//     every other filter (tags, event name, users, words) is checked in Go, so the rows
//     read are the rows the index hands out;
//   - the full-text index, when q has words, users or an event name with words, and it
//     offers at most max candidates and fewer than the time range holds: the scope,
//     the event name and the time range are checked in the query, everything in Go.
//
// The walk of the time index stops at its max+1st row: ErrScanBudget.
func (db *DB) ScanEvents(ctx context.Context, accountID int64, q tidings.EventQuery, max int, fn func(*tidings.Event) error) error {
	if err := q.CheckUsers(); err != nil {
		return err
	}
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return err
	}
	var channelID, channelCount int64
	if q.Channel != "" {
		if channelID, err = db.channelID(ctx, p, q.Channel); err != nil {
			return err
		}
		if channelCount, err = db.countChannel(ctx, channelID); err != nil {
			return err
		}
	}
	var tags, rarest []feedTag
	for _, t := range q.Tags {
		var ft feedTag
		err := db.read.QueryRowContext(ctx, `SELECT id, count FROM tags WHERE project_id = ? AND key = ? AND value = ?`,
			p.ID, t.Key, t.Value).Scan(&ft.id, &ft.count)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // no event has this tag
		}
		if err != nil {
			return err
		}
		tags = append(tags, ft)
		if len(rarest) == 0 || ft.count < rarest[0].count {
			rarest = []feedTag{ft}
		}
	}
	since, until := msOrZero(q.Since), msOrZero(q.Until)
	if since != 0 && until != 0 && since >= until || q.MaxPriority != 0 && q.MinPriority > q.MaxPriority {
		return nil
	}
	if max < 0 {
		max = 0
	}
	// The walk: only the driving index's rows are the query's, every other filter is
	// Go's, so that the LIMIT bounds the rows read.
	walk := feedFilter{project: p.ID, channel: channelID, channelCount: channelCount, tags: rarest,
		since: since, until: until, limit: max + 1, minPriority: q.MinPriority, maxPriority: q.MaxPriority}
	if walk.priorityDrives, err = db.priorityDrives(ctx, walk); err != nil {
		return err
	}
	walk = walk.walked()
	terms := withEventWords(q.Terms, q.Event)
	if len(terms) > 0 || len(q.Users) > 0 {
		db.waitIndexed(ctx) // an event published before the question is counted
		ff := feedFilter{project: p.ID, channel: channelID, channelCount: channelCount, tags: tags, terms: terms,
			users: q.Users, event: q.Event, since: since, until: until, candidates: max + 1, anyOrder: true,
			minPriority: q.MinPriority, maxPriority: q.MaxPriority}
		if ff.terms, err = db.ftsTerms(ctx, p, ff); err != nil {
			return err
		}
		if ff.minSeq, err = db.seqSince(ctx, since); err != nil {
			return err
		}
		var n int
		c := countCandidates(ff)
		if err := db.read.QueryRowContext(ctx, c.sql, c.args...).Scan(&n); err != nil {
			return err
		}
		if n <= max {
			// Fewer rows in the time range than candidates: walk it.
			r := walk
			r.columns, r.limit = "1", n+1
			cr := listQuery(r)
			var m int
			if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+cr.sql+`)`, cr.args...).Scan(&m); err != nil {
				return err
			}
			if m > n {
				ff.columns = eventColumns
				_, err := db.scanRows(ctx, p, searchQuery(ff), q, -1, fn)
				return err
			}
		}
	}
	// The walk's rows are counted first, from the index alone: a question that would
	// read more than max is refused before any event is decoded (a few ms, where
	// reading them would take seconds).
	r := walk
	r.columns = "1"
	cr := listQuery(r)
	var m int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+cr.sql+`)`, cr.args...).Scan(&m); err != nil {
		return err
	}
	if m > max {
		return tidings.ErrScanBudget
	}
	walk.columns = eventColumns
	read, err := db.scanRows(ctx, p, listQuery(walk), q, max, fn)
	if err == nil && read > max {
		err = tidings.ErrScanBudget
	}
	return err
}

// scanRows runs a query of eventColumns and calls fn with each event that q matches,
// its channel named. It returns how many rows it read, stopping after max+1 (max < 0:
// every row).
func (db *DB) scanRows(ctx context.Context, p *tidings.Project, eq eventQuery, q tidings.EventQuery, max int, fn func(*tidings.Event) error) (int, error) {
	rows, err := db.read.QueryContext(ctx, eq.sql, eq.args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	channels := map[int64]string{}
	read := 0
	for rows.Next() {
		read++
		if max >= 0 && read > max {
			break
		}
		ev := &tidings.Event{Project: p.Name}
		var r eventRow
		if err := r.scan(rows, ev); err != nil {
			return read, err
		}
		id, channel := r.id, r.channel
		if len(id) != 16 {
			return read, fmt.Errorf("event id of %d bytes", len(id))
		}
		if err := r.fill(ev); err != nil {
			return read, err
		}
		name, ok := channels[channel]
		if !ok {
			// A project has few channels: each is looked up once, on another connection.
			// One deleted since the scan began took its events with it: they are gone.
			err := db.read.QueryRowContext(ctx, `SELECT name FROM channels WHERE id = ?`, channel).Scan(&name)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return read, err
			}
			channels[channel] = name
		}
		ev.Channel = name
		if !q.Matches(ev) {
			continue
		}
		ev.ID = uuid.UUID(id).String()
		if err := fn(ev); err != nil {
			return read, err
		}
	}
	return read, rows.Err()
}

// CountHours returns the project's (or channel's) event counts per channel and UTC
// hour for the hours in [from, to), from the hourly counts.
func (db *DB) CountHours(ctx context.Context, accountID int64, project, channel string, from, to time.Time) ([]tidings.HourCount, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString(`SELECT c.name, n.hour, n.n FROM event_counts n JOIN channels c ON c.id = n.channel_id WHERE `)
	var args []any
	if channel != "" {
		cid, err := db.channelID(ctx, p, channel)
		if err != nil {
			return nil, err
		}
		sb.WriteString(`n.channel_id = ?`)
		args = append(args, cid)
	} else {
		sb.WriteString(`n.channel_id IN (SELECT id FROM channels WHERE project_id = ?)`)
		args = append(args, p.ID)
	}
	sb.WriteString(` AND n.hour >= ? AND n.hour < ? AND n.n > 0 ORDER BY n.hour, c.name`)
	args = append(args, ms(from), ms(to))
	rows, err := db.read.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []tidings.HourCount{}
	for rows.Next() {
		var c tidings.HourCount
		var hour int64
		if err := rows.Scan(&c.Channel, &hour, &c.N); err != nil {
			return nil, err
		}
		c.Hour = fromMS(hour)
		out = append(out, c)
	}
	return out, rows.Err()
}
