package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

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

// insertEvent writes one event with its tags and outbox job. It needs no savepoint:
// what can refuse an event (an unknown project or channel) is looked up before its
// first write, and refused reports that nothing was written. Any later error fails the
// whole batch, whose jobs are then all answered with it and none is acknowledged.
func (b *batch) insertEvent(ctx context.Context, accountID int64, e *tidings.NewEvent) (ev *tidings.Event, refused bool, err error) {
	p, err := b.project(ctx, accountID, e.Project)
	if err != nil {
		return nil, !isStorageError(err), err
	}
	// b.channel refuses an unknown channel before it writes; creating one is a write.
	channelID, err := b.channel(ctx, p, e.Channel)
	if err != nil {
		return nil, tidings.ErrorCode(err) == tidings.EChannelNotFound, err
	}
	ev, err = b.writeEvent(ctx, accountID, p, channelID, e)
	return ev, false, err
}

// writeEvent writes an accepted event, its rows of the tag index and its outbox job.
func (b *batch) writeEvent(ctx context.Context, accountID int64, p *tidings.Project, channelID int64, e *tidings.NewEvent) (*tidings.Event, error) {
	ev, err := e.Accept(b.now)
	if err != nil {
		return nil, err
	}
	id, ok := idBytes(ev.ID)
	if !ok {
		return nil, fmt.Errorf("event id %q is not a UUID", ev.ID)
	}
	tags := ev.Tags.JSON()
	s, err := b.stmt(ctx, sqlInsertEvent)
	if err != nil {
		return nil, err
	}
	ts := ms(ev.Timestamp)
	seq, err := b.nextSeq(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ExecContext(ctx, seq, id, p.ID, channelID, ev.Event, ev.Description, ev.Icon, ev.Notify,
		string(tags), ev.Parser, ev.UserID, ts, ms(b.now)); err != nil {
		return nil, err
	}
	tagIDs := make([]int64, 0, len(ev.Tags))
	for _, t := range ev.Tags {
		tagID, err := b.tag(ctx, p.ID, t.Key, t.Value)
		if err != nil {
			return nil, err
		}
		b.tagRows = append(b.tagRows, tagID, ts, seq, channelID)
		b.jobTag[tagID]++
		tagIDs = append(tagIDs, tagID)
	}
	b.searchRows = append(b.searchRows, seq, ev.SearchText(), searchScope(p.ID, channelID, tagIDs, ev.UserID))
	b.jobHours[hourKey{channelID, hourOf(ts)}]++
	if ev.UserID != "" {
		b.users[userKey{p.ID, ev.UserID}]++ // an event is never rolled back alone: no job copy needed
	}
	if err := b.outboxFor(ctx, accountID, p, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// eventQuery is a feed query as SQL: built apart from running it, so that a test can
// check its plan (EXPLAIN QUERY PLAN) for scans and sorts.
type eventQuery struct {
	sql  string
	args []any
}

// cursor is the position of a feed page's last event: newest first by (ts, seq).
type cursor struct{ ts, seq int64 }

// feedTag is a tag filter resolved to its dictionary row.
type feedTag struct{ id, count int64 }

// feedFilter is a feed page's filter, resolved to the store's keys.
type feedFilter struct {
	project, channel, channelCount int64
	tags                           []feedTag
	terms                          []tidings.Term
	users                          []string // only these user_ids' events
	since, until                   int64    // unix ms; 0 is open
	before                         *cursor
	limit                          int
	// minSeq bounds a word search's walk from below (0: none).
	minSeq int64
	// columns are what the query selects (default eventColumns; "e.seq" to count or
	// to read the events later).
	columns string
}

// selected is the filter's columns.
func (f feedFilter) selected() string {
	if f.columns == "" {
		return eventColumns
	}
	return f.columns
}

// listQuery builds the query for a feed page. Its plan is chosen here, not left to
// SQLite's guess: the page is read from the index of the smallest set among the
// project (or channel) and the filter's tags — the rarest tag's rows when it has fewer
// events than the channel — newest first, and every other condition is a check on
// the rows it walks, so the scan stops at the page's end.
//
// A search for words reads the full-text index instead (searchQuery).
func listQuery(f feedFilter) eventQuery {
	if len(f.terms) > 0 || len(f.users) > 0 {
		return searchQuery(f)
	}
	var sb strings.Builder
	var args []any
	tags := f.tags
	driver := -1 // index in tags of the tag whose rows drive the scan
	for i, t := range tags {
		if driver < 0 || t.count < tags[driver].count {
			driver = i
		}
	}
	if driver >= 0 && f.channel != 0 && f.channelCount < tags[driver].count {
		driver = -1
	}
	// pos names the columns that order the scan: the driving index's.
	pos := "e"
	if driver >= 0 {
		pos = "d"
		// CROSS JOIN keeps the tag's rows as the outer loop.
		// The event is checked to be the project's and to have the row's time: a
		// row of the index can never hand out another project's event.
		sb.WriteString(`SELECT ` + f.selected() + ` FROM event_tags d CROSS JOIN events e ON e.seq = d.seq
			WHERE d.tag_id = ? AND +e.project_id = ? AND +e.ts = d.ts`)
		args = append(args, tags[driver].id, f.project)
		if f.channel != 0 {
			sb.WriteString(` AND d.channel_id = ?`)
			args = append(args, f.channel)
		}
	} else {
		sb.WriteString(`SELECT ` + f.selected() + ` FROM events e WHERE `)
		if f.channel != 0 {
			sb.WriteString(`e.channel_id = ?`)
			args = append(args, f.channel)
		} else {
			sb.WriteString(`e.project_id = ?`)
			args = append(args, f.project)
		}
	}
	if f.before != nil {
		sb.WriteString(` AND (` + pos + `.ts, ` + pos + `.seq) < (?, ?)`)
		args = append(args, f.before.ts, f.before.seq)
	}
	if f.since != 0 {
		sb.WriteString(` AND ` + pos + `.ts >= ?`)
		args = append(args, f.since)
	}
	if f.until != 0 {
		sb.WriteString(` AND ` + pos + `.ts < ?`)
		args = append(args, f.until)
	}
	for i, t := range tags {
		if i == driver {
			continue
		}
		sb.WriteString(` AND EXISTS (SELECT 1 FROM event_tags x WHERE x.tag_id = ? AND x.ts = e.ts AND x.seq = e.seq)`)
		args = append(args, t.id)
	}
	sb.WriteString(` ORDER BY ` + pos + `.ts DESC, ` + pos + `.seq DESC LIMIT ?`)
	args = append(args, f.limit)
	return eventQuery{sb.String(), args}
}

// searchQuery reads a word search's candidates from the full-text index — at most
// searchBudget+1 of them, which the caller has counted to be all — newest first by
// event timestamp, like the feed. The index holds, beside each event's words, its scope:
// tokens for its project, channel and tags (p7 c12 t40), so the project, channel and tag
// filters are part of the full-text query, which intersects them. The time range and
// the page's cursor are checked on the rows read.
func searchQuery(f feedFilter) eventQuery {
	var sb strings.Builder
	args := []any{matchExpr(f)}
	sb.WriteString(`SELECT ` + f.selected() + ` FROM (SELECT rowid AS seq FROM events_fts WHERE events_fts MATCH ?`)
	if f.minSeq != 0 {
		sb.WriteString(` AND rowid >= ?`)
		args = append(args, f.minSeq)
	}
	// The event is checked to be the project's: a row of the index can never hand out
	// another project's event.
	sb.WriteString(` LIMIT ?) x CROSS JOIN events e ON e.seq = x.seq WHERE +e.project_id = ?`)
	args = append(args, searchBudget+1, f.project)
	if len(f.users) > 0 {
		// Their scope tokens are hashes: this makes it exact.
		sb.WriteString(` AND e.user_id IN (?` + strings.Repeat(`, ?`, len(f.users)-1) + `)`)
		for _, u := range f.users {
			args = append(args, u)
		}
	}
	if f.before != nil {
		sb.WriteString(` AND (e.ts, e.seq) < (?, ?)`)
		args = append(args, f.before.ts, f.before.seq)
	}
	if f.since != 0 {
		sb.WriteString(` AND e.ts >= ?`)
		args = append(args, f.since)
	}
	if f.until != 0 {
		sb.WriteString(` AND e.ts < ?`)
		args = append(args, f.until)
	}
	sb.WriteString(` ORDER BY e.ts DESC, e.seq DESC`)
	return eventQuery{sb.String(), args}
}

// countCandidates counts the rows of the full-text index a search's query matches
// (its scope and the terms given to the index), up to searchBudget+1: whatever the page.
func countCandidates(f feedFilter) eventQuery {
	q := `SELECT count(*) FROM (SELECT 1 FROM events_fts WHERE events_fts MATCH ?`
	args := []any{matchExpr(f)}
	if f.minSeq != 0 {
		q += ` AND rowid >= ?`
		args = append(args, f.minSeq)
	}
	return eventQuery{q + ` LIMIT ?)`, append(args, searchBudget+1)}
}

// matchExpr is the FTS5 query of a search: scope tokens, then each term as a phrase
// of its words (which hold only letters and digits), a prefix when it ends in *.
func matchExpr(f feedFilter) string {
	var b strings.Builder
	if f.channel != 0 {
		fmt.Fprintf(&b, `scope:"c%d"`, f.channel)
	} else {
		fmt.Fprintf(&b, `scope:"p%d"`, f.project)
	}
	for _, t := range f.tags {
		fmt.Fprintf(&b, ` AND scope:"t%d"`, t.id)
	}
	for i, u := range f.users {
		switch {
		case i == 0:
			b.WriteString(` AND (`)
		default:
			b.WriteString(` OR `)
		}
		b.WriteString(`scope:"` + userToken(u) + `"`)
		if i == len(f.users)-1 {
			b.WriteString(`)`)
		}
	}
	for _, t := range f.terms {
		b.WriteString(` AND text:"` + strings.Join(t.Words, " ") + `"`)
		if t.Prefix {
			b.WriteString(`*`)
		}
	}
	return b.String()
}

// userToken is an event's user_id as a token of the scope column: u and 16 hex
// digits of its SHA-256 (a user_id may hold any characters; the query checks the
// user_id itself too).
func userToken(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return "u" + hex.EncodeToString(sum[:8])
}

// searchScope is the scope column of an event's row in the full-text index.
func searchScope(project, channel int64, tagIDs []int64, userID string) string {
	b := make([]byte, 0, 40+8*len(tagIDs))
	b = append(b, 'p')
	b = strconv.AppendInt(b, project, 10)
	b = append(b, " c"...)
	b = strconv.AppendInt(b, channel, 10)
	for _, id := range tagIDs {
		b = append(b, " t"...)
		b = strconv.AppendInt(b, id, 10)
	}
	if userID != "" {
		b = append(b, ' ')
		b = append(b, userToken(userID)...)
	}
	return string(b)
}

// ListEvents returns a page of the project's events, newest first.
func (db *DB) ListEvents(ctx context.Context, accountID int64, q tidings.EventQuery) (*tidings.EventPage, error) {
	if err := q.CheckUsers(); err != nil {
		return nil, err
	}
	p, err := findProject(ctx, db.read, accountID, q.Project)
	if err != nil {
		return nil, err
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
		since: msOrZero(q.Since), until: msOrZero(q.Until), before: before, limit: q.Limit + 1}
	if len(q.Terms) > 0 || len(q.Users) > 0 {
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

// msOrZero is t in unix ms, 0 for the zero time (an open end of a range).
func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return ms(t)
}

// eventColumns are what queryEvents scans, from events aliased e. The channel's name
// is looked up apart (a page has few channels), so that no join sways the plan.
const eventColumns = `e.id, e.channel_id, e.event, e.description, e.icon, e.notify, e.tags, e.parser, e.user_id, e.ts, e.created_at`

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
		var id []byte
		var tags string
		var channel, ts, created int64
		if err := rows.Scan(&id, &channel, &ev.Event, &ev.Description, &ev.Icon, &ev.Notify, &tags,
			&ev.Parser, &ev.UserID, &ts, &created); err != nil {
			return nil, err
		}
		if len(id) != 16 {
			return nil, fmt.Errorf("event id of %d bytes", len(id))
		}
		ev.ID = uuid.UUID(id).String()
		if err := json.Unmarshal([]byte(tags), &ev.Tags); err != nil {
			return nil, err
		}
		ev.Timestamp, ev.CreatedAt = fromMS(ts), fromMS(created)
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
	p, err := findProject(ctx, db.read, accountID, project)
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
	p, err := findProject(ctx, db.read, accountID, project)
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

// CountEventsAfter counts events accepted after the event with ID after, up to max.
func (db *DB) CountEventsAfter(ctx context.Context, accountID int64, project, after string, max int) (int, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return 0, err
	}
	key, ok := idBytes(after)
	if !ok {
		return 0, nil
	}
	q := afterQuery("1", key, p.ID, max)
	var n int
	err = db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+q.sql+`)`, q.args...).Scan(&n)
	return n, err
}

// countChannel is how many events the channel holds, from the hourly counts.
func (db *DB) countChannel(ctx context.Context, channel int64) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts WHERE channel_id = ?`, channel).Scan(&n)
	return n, err
}

const hourMS = 3_600_000

// countsQuery counts events per bucket from the hourly counts of the project's channels
// (or one channel): no event is read.
func countsQuery(project, channel, since, width int64) eventQuery {
	if channel != 0 {
		return eventQuery{`SELECT (hour / ?) * ?, sum(n) FROM event_counts WHERE channel_id = ? AND hour >= ? GROUP BY 1`,
			[]any{width, width, channel, since}}
	}
	return eventQuery{`SELECT (hour / ?) * ?, sum(n) FROM event_counts
		WHERE channel_id IN (SELECT id FROM channels WHERE project_id = ?) AND hour >= ? GROUP BY 1`,
		[]any{width, width, project, since}}
}

// CountEventsBy counts events per bucket from since on. Buckets of whole hours from
// the start of an hour come from the hourly counts; anything finer reads the events.
func (db *DB) CountEventsBy(ctx context.Context, accountID int64, project, channel string, since time.Time, bucket time.Duration) (map[time.Time]int, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return nil, err
	}
	var cid int64
	if channel != "" {
		if cid, err = db.channelID(ctx, p, channel); err != nil {
			return nil, err
		}
	}
	width, from := bucket.Milliseconds(), ms(since)
	var q eventQuery
	if width > 0 && width%hourMS == 0 && from%hourMS == 0 {
		q = countsQuery(p.ID, cid, from, width)
	} else if cid != 0 {
		q = eventQuery{`SELECT (ts / ?) * ?, count(*) FROM events WHERE channel_id = ? AND ts >= ? GROUP BY 1`,
			[]any{width, width, cid, from}}
	} else {
		q = eventQuery{`SELECT (ts / ?) * ?, count(*) FROM events WHERE project_id = ? AND ts >= ? GROUP BY 1`,
			[]any{width, width, p.ID, from}}
	}
	rows, err := db.read.QueryContext(ctx, q.sql, q.args...)
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

// DeleteEvent deletes one event: its row (the trigger of migration 7 takes its row of
// the search index along), its rows of the tag index, and it from the tag and hourly
// counts, in one group-committed transaction.
func (db *DB) DeleteEvent(ctx context.Context, accountID int64, project, id string) error {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return err
	}
	notFound := tidings.EventNotFound(project, id)
	key, ok := idBytes(id)
	if !ok {
		return notFound
	}
	found := false
	err = db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var d doomed
		err := tx.QueryRowContext(ctx, `SELECT seq, id, ts, channel_id, tags, user_id FROM events WHERE id = ? AND project_id = ?`, key, p.ID).
			Scan(&d.seq, &d.id, &d.ts, &d.channel, &d.tags, &d.user)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return deleteEvents(ctx, tx, p.ID, []doomed{d})
	})
	if err != nil {
		return err
	}
	if !found {
		return notFound
	}
	return nil
}

// doomed is an event about to be deleted: what its deletion must undo.
type doomed struct {
	seq, ts, channel int64
	id               []byte
	tags             string // its tags as stored (JSON)
	user             string
}

// deleteEvents deletes events of one project in tx: their rows of the tag index, them
// from the tag and hourly counts, and their rows (the trigger of migration 7 takes
// their rows of the search index along).
func deleteEvents(ctx context.Context, tx *sql.Tx, project int64, events []doomed) error {
	tagIDs := map[tagKey]int64{}
	tagGone := map[int64]int64{}
	hourGone := map[hourKey]int64{}
	userGone := map[string]int64{}
	for _, d := range events {
		var tt tidings.Tags
		if err := json.Unmarshal([]byte(d.tags), &tt); err != nil {
			return err
		}
		for _, t := range tt {
			k := tagKey{project, t.Key, t.Value}
			id, ok := tagIDs[k]
			if !ok {
				err := tx.QueryRowContext(ctx, sqlFindTag, project, t.Key, t.Value).Scan(&id)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				tagIDs[k] = id
			}
			if id == 0 {
				continue
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM event_tags WHERE tag_id = ? AND ts = ? AND seq = ?`, id, d.ts, d.seq)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				tagGone[id]++
			}
		}
		hourGone[hourKey{d.channel, hourOf(d.ts)}]++
		if d.user != "" {
			userGone[d.user]++
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE seq = ?`, d.seq); err != nil {
			return err
		}
		// Its pending deliveries go with it: nobody is told of an event that is gone.
		if len(d.id) == 16 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE event_id = ?`, uuid.UUID(d.id).String()); err != nil {
				return err
			}
		}
	}
	for id, n := range tagGone {
		if _, err := tx.ExecContext(ctx, `UPDATE tags SET count = max(count - ?, 0) WHERE id = ?`, n, id); err != nil {
			return err
		}
	}
	for u, n := range userGone {
		if _, err := tx.ExecContext(ctx, `UPDATE people SET events = max(events - ?, 0) WHERE project_id = ? AND user_id = ?`,
			n, project, u); err != nil {
			return err
		}
	}
	for k, n := range hourGone {
		if _, err := tx.ExecContext(ctx, `UPDATE event_counts SET n = max(n - ?, 0) WHERE channel_id = ? AND hour = ?`,
			n, k.channel, k.hour); err != nil {
			return err
		}
	}
	return nil
}

// SetRetention sets how many days the project keeps its events.
func (db *DB) SetRetention(ctx context.Context, accountID int64, project string, days int) error {
	if err := tidings.CheckRetention(days); err != nil {
		return err
	}
	return db.setProject(ctx, accountID, project, "retention_days", days)
}

// PurgeExpired deletes up to max expired events, the oldest of one project with a
// retention at a time, in one group-committed transaction: a short one, so that
// publishing goes on beside a purge of millions of events.
func (db *DB) PurgeExpired(ctx context.Context, now time.Time, max int) (int, error) {
	type kept struct{ id, days int64 }
	rows, err := db.read.QueryContext(ctx, `SELECT id, retention_days FROM projects WHERE retention_days > 0 ORDER BY id`)
	if err != nil {
		return 0, err
	}
	var projects []kept
	for rows.Next() {
		var k kept
		if err := rows.Scan(&k.id, &k.days); err != nil {
			rows.Close()
			return 0, err
		}
		projects = append(projects, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	deleted := 0
	for _, k := range projects {
		cutoff := ms(now) - k.days*24*3_600_000
		err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT seq, id, ts, channel_id, tags, user_id FROM events WHERE project_id = ? AND ts < ?
				ORDER BY ts, seq LIMIT ?`, k.id, cutoff, max-deleted)
			if err != nil {
				return err
			}
			var events []doomed
			for rows.Next() {
				var d doomed
				if err := rows.Scan(&d.seq, &d.id, &d.ts, &d.channel, &d.tags, &d.user); err != nil {
					rows.Close()
					return err
				}
				events = append(events, d)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if err := deleteEvents(ctx, tx, k.id, events); err != nil {
				return err
			}
			deleted += len(events)
			return nil
		})
		if err != nil || deleted >= max {
			return deleted, err
		}
	}
	return deleted, nil
}
