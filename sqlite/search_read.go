package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// A word search's cost is bounded (docs/performance.md, "Search on SQLite"): whatever
// the words, prefixes and time range, one page reads at most searchBudget events. Its
// order is the feed's: newest first by event timestamp, ties by arrival.
//
//   - A time range that holds at most searchBudget of the project's events is read
//     whole from the time index, and the words are checked on those events: the range
//     bounds the work (before:2001-01-01 reads nothing at all).
//   - Otherwise the full-text index is asked how many events it offers (its scope and
//     the rare terms, from the range's start when it has one: after: bounds it by
//     arrival, as no event is accepted more than a day before its timestamp). When they
//     are at most searchBudget they are read, sorted by time and checked: every match.
//   - When there are more, the words are common: the time index is walked as the feed
//     walks it, and each event read is checked, at most searchBudget a page. Terms
//     common among the newest events stay out of the full-text query and are checked on
//     the events read (ftsTerms says why).
//   - A page that the budget ends before it is full is answered with what was found and
//     a cursor to continue from the last event read.
const (
	searchBudget = 2_000
	searchSample = 200
)

// searchEvents reads a page of a word search (or a journey), newest first by timestamp.
func (db *DB) searchEvents(ctx context.Context, p *tidings.Project, f feedFilter, q tidings.EventQuery) (*tidings.EventPage, error) {
	// The full-text index trails the events by a moment: the search waits until it
	// holds every event committed before it began (a publish answered is found).
	db.waitIndexed(ctx)
	// What the full-text query leaves out is checked on each event read: the words
	// and the time range (project, channel, tags and users are the query's scope).
	check := tidings.EventQuery{Event: q.Event, Terms: q.Terms, Users: q.Users, Tags: q.Tags, Since: q.Since, Until: q.Until,
		MinPriority: q.MinPriority, MaxPriority: q.MaxPriority}
	if f.since != 0 || f.until != 0 {
		n, err := db.countRange(ctx, f)
		if err != nil {
			return nil, err
		}
		if n <= searchBudget {
			return db.searchRange(ctx, p, f, check)
		}
	}
	terms, err := db.ftsTerms(ctx, p, f)
	if err != nil {
		return nil, err
	}
	ff := f
	ff.terms = terms
	if ff.minSeq, err = db.seqSince(ctx, f.since); err != nil {
		return nil, err
	}
	var n int
	c := countCandidates(ff)
	if err := db.read.QueryRowContext(ctx, c.sql, c.args...).Scan(&n); err != nil {
		return nil, err
	}
	if n <= searchBudget && !denser(f, n) {
		return db.readCandidates(ctx, p, ff, check, f.limit-1)
	}
	walk := f
	// The LIMIT is of rows read, not rows kept: every filter that no index holds (the
	// words, users, event name) is checked on the rows read, none in the query.
	walk.terms, walk.users, walk.event, walk.limit = nil, nil, "", searchBudget
	return db.readChecked(ctx, p, listQuery(walk.walked()), check, f.limit-1)
}

// seqSince is the lowest seq a search for events since a time (unix ms; 0 is open)
// reads the full-text index from: a timestamp is at most a day ahead of its event's
// acceptance, so the events since a time were all accepted since a day before it.
func (db *DB) seqSince(ctx context.Context, since int64) (int64, error) {
	if since == 0 {
		return 0, nil
	}
	key, ok := idBytes(tidings.EventIDFloor(fromMS(since - 24*hourMS)))
	if !ok {
		return 0, nil
	}
	var seq int64
	err := db.read.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM events WHERE id >= ? ORDER BY id LIMIT 1), 0)`, key).Scan(&seq)
	return seq, err
}

// denser reports whether n candidates are so many among the events of the filter's
// channel or tag that walking those events in order fills a page sooner than reading
// every candidate would: a page needs about limit·scope/n events read, the candidates n
// (a common word in the rarest channel: 1,400 candidates among 14,000 events took 65 ms
// to read, the walk a few).
func denser(f feedFilter, n int) bool {
	scope := int64(0)
	if f.channel != 0 {
		scope = f.channelCount
	}
	for _, t := range f.tags {
		if scope == 0 || t.count < scope {
			scope = t.count
		}
	}
	return scope > 0 && int64(n)*int64(n) > int64(f.limit)*scope
}

// readCandidates reads the full-text index's candidates (at most searchBudget+1):
// their keys first, sorted newest first by timestamp, then the events in that order, a
// batch at a time, only as far as a page (limit) of those that check matches needs —
// sorting whole events cost 39 µs each on a store of 10 million.
func (db *DB) readCandidates(ctx context.Context, p *tidings.Project, f feedFilter, check tidings.EventQuery, limit int) (*tidings.EventPage, error) {
	f.columns = "e.seq, e.id"
	keys := searchQuery(f)
	rows, err := db.read.QueryContext(ctx, keys.sql, keys.args...)
	if err != nil {
		return nil, err
	}
	var seqs []int64
	var ids []string
	for rows.Next() {
		var seq int64
		var id []byte
		if err := rows.Scan(&seq, &id); err != nil {
			rows.Close()
			return nil, err
		}
		if len(id) != 16 {
			rows.Close()
			return nil, fmt.Errorf("event id of %d bytes", len(id))
		}
		seqs, ids = append(seqs, seq), append(ids, uuid.UUID(id).String())
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	kept := []*tidings.Event{}
	for len(seqs) > 0 && len(kept) <= limit {
		n := min(len(seqs), 2*(limit+1))
		args := make([]any, n)
		for i, s := range seqs[:n] {
			args[i] = s
		}
		evs, err := db.queryEvents(ctx, p, `SELECT `+eventColumns+` FROM events e WHERE e.seq IN (?`+strings.Repeat(`, ?`, n-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		byID := make(map[string]*tidings.Event, len(evs))
		for _, ev := range evs {
			byID[ev.ID] = ev
		}
		for _, id := range ids[:n] {
			if ev := byID[id]; ev != nil && check.Matches(ev) && len(kept) <= limit {
				kept = append(kept, ev)
			}
		}
		seqs, ids = seqs[n:], ids[n:]
	}
	page := &tidings.EventPage{Events: kept}
	if len(kept) > limit {
		page.Events = kept[:limit]
		page.Next = kept[limit-1].ID
	}
	return page, nil
}

// countRange counts the events in the filter's time range, up to searchBudget+1.
func (db *DB) countRange(ctx context.Context, f feedFilter) (int, error) {
	r := listQuery(feedFilter{project: f.project, channel: f.channel, channelCount: f.channelCount,
		since: f.since, until: f.until, limit: searchBudget + 1, columns: "1"})
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+r.sql+`)`, r.args...).Scan(&n)
	return n, err
}

// searchRange reads the whole time range (at most searchBudget events) and keeps the
// matches, newest first by timestamp like every list.
func (db *DB) searchRange(ctx context.Context, p *tidings.Project, f feedFilter, check tidings.EventQuery) (*tidings.EventPage, error) {
	r := listQuery(feedFilter{project: f.project, channel: f.channel, channelCount: f.channelCount,
		since: f.since, until: f.until, limit: searchBudget + 1, columns: "e.seq"})
	query := `SELECT ` + eventColumns + ` FROM (` + r.sql + `) x CROSS JOIN events e ON e.seq = x.seq`
	args := r.args
	if f.before != nil {
		query += ` WHERE (e.ts, e.seq) < (?, ?)`
		args = append(args, f.before.ts, f.before.seq)
	}
	query += ` ORDER BY e.ts DESC, e.seq DESC`
	return db.readChecked(ctx, p, eventQuery{query, args}, check, f.limit-1)
}

// ftsTerms are the terms worth giving the full-text index. FTS5 reads one whole word's
// list lazily, newest first, but intersects several lists, and expands a prefix into
// the merged lists of every word it begins, before it returns a row: cost without a
// bound when the words are common (8 common words took 78 ms at 1.45 million events,
// "customer*" 100 ms). So a term common among the newest searchSample events in the
// filter's scope stays out of the full-text query and is checked on the events read,
// where it matches often; the index gets the rare terms — or, when every term is
// common, the one whole word that matched least, to walk its list.
func (db *DB) ftsTerms(ctx context.Context, p *tidings.Project, f feedFilter) ([]tidings.Term, error) {
	if len(f.terms) == 0 || len(f.terms) == 1 && !f.terms[0].Prefix { // a journey, or one word: nothing to weigh
		return f.terms, nil
	}
	r := listQuery(feedFilter{project: f.project, channel: f.channel, channelCount: f.channelCount, limit: searchSample})
	sample, err := db.queryEvents(ctx, p, r.sql, r.args...)
	if err != nil {
		return nil, err
	}
	hits := make([]int, len(f.terms))
	for _, ev := range sample {
		words := tidings.SearchWords(ev.SearchText())
		for i, t := range f.terms {
			if tidings.TermIn(words, t) {
				hits[i]++
			}
		}
	}
	var rare []tidings.Term
	least := -1 // the whole word that matched least
	for i, t := range f.terms {
		if hits[i] < 2 {
			rare = append(rare, t)
		}
		if !t.Prefix && (least < 0 || hits[i] < hits[least]) {
			least = i
		}
	}
	if len(rare) == 0 && least >= 0 {
		rare = append(rare, f.terms[least])
	}
	return rare, nil
}

// readChecked runs a query of eventColumns over the project's events, newest first by
// timestamp, and keeps a page (limit) of those that check matches, reading no more than
// searchBudget rows. A page the budget ended early gets the last event read as its
// cursor.
func (db *DB) readChecked(ctx context.Context, p *tidings.Project, q eventQuery, check tidings.EventQuery, limit int) (*tidings.EventPage, error) {
	rows, err := db.read.QueryContext(ctx, q.sql, q.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var kept []*tidings.Event
	var channelOf []int64
	read := 0
	var lastID []byte
	for rows.Next() && len(kept) <= limit && read < searchBudget {
		ev := &tidings.Event{Project: p.Name}
		var r eventRow
		if err := r.scan(rows, ev); err != nil {
			return nil, err
		}
		read++
		id, channel := r.id, r.channel
		lastID = id
		if err := r.fill(ev); err != nil {
			return nil, err
		}
		if !check.Matches(ev) {
			continue
		}
		if len(id) != 16 {
			return nil, fmt.Errorf("event id of %d bytes", len(id))
		}
		ev.ID = uuid.UUID(id).String()
		kept = append(kept, ev)
		channelOf = append(channelOf, channel)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if err := db.nameChannels(ctx, kept, channelOf); err != nil {
		return nil, err
	}
	page := &tidings.EventPage{Events: kept}
	switch {
	case len(kept) > limit:
		page.Events = kept[:limit]
		page.Next = kept[limit-1].ID
	case read >= searchBudget && len(lastID) == 16:
		// The budget ended the page: continue from the last event read.
		page.Next = uuid.UUID(lastID).String()
	}
	return page, nil
}

// nameChannels fills in the events' channel names (a page has few channels).
func (db *DB) nameChannels(ctx context.Context, evs []*tidings.Event, channelOf []int64) error {
	names := map[int64]string{}
	for i, ev := range evs {
		name, ok := names[channelOf[i]]
		if !ok {
			if err := db.read.QueryRowContext(ctx, `SELECT name FROM channels WHERE id = ?`, channelOf[i]).Scan(&name); err != nil && err != sql.ErrNoRows {
				return err
			}
			names[channelOf[i]] = name
		}
		ev.Channel = name
	}
	return nil
}
