package sqlite

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings"
)

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
	event                          string   // only events of this exact name ("": any)
	since, until                   int64    // unix ms; 0 is open
	before                         *cursor
	limit                          int
	// minSeq bounds a word search's walk from below (0: none).
	minSeq int64
	// candidates bounds the rows a word search reads from the full-text index (0:
	// searchBudget+1).
	candidates int
	// anyOrder leaves a word search's rows unsorted (a chart's scan).
	anyOrder bool
	// columns are what the query selects (default eventColumns; "e.seq" to count or
	// to read the events later).
	columns string
	// minPriority and maxPriority bound the events' priority (0: unbounded);
	// priorityDrives makes the priority index drive a page that has tags too (the
	// caller counted its rows to be fewer than the rarest tag's).
	minPriority, maxPriority tidings.Priority
	priorityDrives           bool
}

// priorityRange is the filter's priority bounds, closed (1 to 5 when unbounded), and
// whether they leave any priority out.
func (f feedFilter) priorityRange() (lo, hi tidings.Priority, bounded bool) {
	lo, hi = max(f.minPriority, tidings.PriorityMin), f.maxPriority
	if hi == 0 || hi > tidings.PriorityUrgent {
		hi = tidings.PriorityUrgent
	}
	return lo, hi, lo > tidings.PriorityMin || hi < tidings.PriorityUrgent
}

// priorityArms are the priorities a page walks the priority index for, one walk
// each: those of the range when it leaves out the default priority, which the index
// does not hold (nil otherwise: the range holds most events, and is a check).
func (f feedFilter) priorityArms() []tidings.Priority {
	lo, hi, bounded := f.priorityRange()
	if !bounded || lo <= tidings.PriorityDefault && tidings.PriorityDefault <= hi {
		return nil
	}
	var arms []tidings.Priority
	for p := hi; p >= lo; p-- {
		arms = append(arms, p)
	}
	return arms
}

// walked is f for a walk whose LIMIT bounds the rows read (a search's walk, a chart's
// scan): its priority range stays in the query only when the priority index drives
// the walk; otherwise the caller checks it on the rows read.
func (f feedFilter) walked() feedFilter {
	if f.priorityArms() == nil || len(f.tags) > 0 && !f.priorityDrives {
		f.minPriority, f.maxPriority = 0, 0
	}
	return f
}

// priorityCheck is the SQL check of the filter's priority bounds on the events read
// ("" when unbounded). The bounds are our own small integers, written in the SQL.
func (f feedFilter) priorityCheck() string {
	lo, hi, bounded := f.priorityRange()
	if !bounded {
		return ""
	}
	if lo > hi {
		return ` AND 0`
	}
	return fmt.Sprintf(` AND e.priority BETWEEN %d AND %d`, lo, hi)
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
	if arms := f.priorityArms(); arms != nil && (len(f.tags) == 0 || f.priorityDrives) {
		return priorityQuery(f, arms)
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
	if f.event != "" {
		// A check on the rows walked: no index holds event names (a page of a rare
		// name is found by its words, searchEvents).
		sb.WriteString(` AND e.event = ?`)
		args = append(args, f.event)
	}
	for i, t := range tags {
		if i == driver {
			continue
		}
		sb.WriteString(` AND EXISTS (SELECT 1 FROM event_tags x WHERE x.tag_id = ? AND x.ts = e.ts AND x.seq = e.seq)`)
		args = append(args, t.id)
	}
	sb.WriteString(f.priorityCheck())
	sb.WriteString(` ORDER BY ` + pos + `.ts DESC, ` + pos + `.seq DESC LIMIT ?`)
	args = append(args, f.limit)
	return eventQuery{sb.String(), args}
}

// priorityQuery builds a page of a priority range that leaves out the default
// priority (priority:urgent, priority:>=high): one walk of the priority index of the
// project or channel per priority, newest first, each as long as a page, merged by
// time. The index holds only events of other priorities than the default, a few of a
// big project's, so each walk reads its page and stops. The walks name their index:
// the time index also gives their order and would walk every event of the project.
// Every other condition is a check on the rows walked, as in listQuery.
func priorityQuery(f feedFilter, arms []tidings.Priority) eventQuery {
	var sb strings.Builder
	var args []any
	sb.WriteString(`SELECT ` + f.selected() + ` FROM (`)
	for i, p := range arms {
		if i > 0 {
			sb.WriteString(` UNION ALL `)
		}
		if f.channel != 0 {
			fmt.Fprintf(&sb, `SELECT * FROM (SELECT e.seq, e.ts FROM events e INDEXED BY events_channel_priority
				WHERE e.channel_id = ? AND e.priority = %d AND e.priority <> 3`, p)
			args = append(args, f.channel)
		} else {
			fmt.Fprintf(&sb, `SELECT * FROM (SELECT e.seq, e.ts FROM events e INDEXED BY events_priority
				WHERE e.project_id = ? AND e.priority = %d AND e.priority <> 3`, p)
			args = append(args, f.project)
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
		if f.event != "" {
			sb.WriteString(` AND e.event = ?`)
			args = append(args, f.event)
		}
		for _, t := range f.tags {
			sb.WriteString(` AND EXISTS (SELECT 1 FROM event_tags x WHERE x.tag_id = ? AND x.ts = e.ts AND x.seq = e.seq)`)
			args = append(args, t.id)
		}
		sb.WriteString(` ORDER BY e.ts DESC, e.seq DESC LIMIT ?)`)
		args = append(args, f.limit)
	}
	// The events are read once the page is known: the walks read only their index.
	sb.WriteString(`) x CROSS JOIN events e ON e.seq = x.seq ORDER BY x.ts DESC, x.seq DESC LIMIT ?`)
	args = append(args, f.limit)
	return eventQuery{sb.String(), args}
}

// searchQuery reads a word search's candidates from the full-text index — at most
// searchBudget+1 of them, which the caller has counted to be all — newest first by
// event timestamp, like the feed. The index holds, beside each event's words, its scope:
// tokens for its project, channel and tags (_p7 _c12 _t40), so the project, channel and tag
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
	args = append(args, f.maxCandidates(), f.project)
	if f.event != "" {
		sb.WriteString(` AND e.event = ?`)
		args = append(args, f.event)
	}
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
	sb.WriteString(f.priorityCheck())
	if !f.anyOrder {
		sb.WriteString(` ORDER BY e.ts DESC, e.seq DESC`)
	}
	return eventQuery{sb.String(), args}
}

// countCandidates counts the rows of the full-text index a search's query matches
// (its scope and the terms given to the index), up to searchBudget+1 (or f.candidates):
// whatever the page.
func countCandidates(f feedFilter) eventQuery {
	q := `SELECT count(*) FROM (SELECT 1 FROM events_fts WHERE events_fts MATCH ?`
	args := []any{matchExpr(f)}
	if f.minSeq != 0 {
		q += ` AND rowid >= ?`
		args = append(args, f.minSeq)
	}
	return eventQuery{q + ` LIMIT ?)`, append(args, f.maxCandidates())}
}

// maxCandidates is the LIMIT of a search's read of the full-text index.
func (f feedFilter) maxCandidates() int {
	if f.candidates > 0 {
		return f.candidates
	}
	return searchBudget + 1
}

// matchExpr is the FTS5 query of a search: scope tokens, then each term as a phrase
// of its words (which hold only letters and digits, so never a scope token's mark), a
// prefix when it ends in *.
func matchExpr(f feedFilter) string {
	var b strings.Builder
	if f.channel != 0 {
		fmt.Fprintf(&b, `scope:"%s"`, scopeToken('c', f.channel))
	} else {
		fmt.Fprintf(&b, `scope:"%s"`, scopeToken('p', f.project))
	}
	for _, t := range f.tags {
		fmt.Fprintf(&b, ` AND scope:"%s"`, scopeToken('t', t.id))
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

// scopeMark begins every scope token. The full-text index's tokenizer keeps it inside
// a token (tokenchars), and it is neither a letter nor a digit, so no word of a query
// holds it (tidings.SearchWords), and an event's text has it replaced by a space
// (searchText): a word such as p1 never reads the posting list of project 1's token,
// which holds every event of the project (docs/decisions.md). Before, tokens were p1,
// c1, t1 and a search for p1 read a whole project's list to find none.
const scopeMark = '_'

// scopeToken is the scope token of a project (kind p), channel (c) or tag (t).
func scopeToken(kind byte, id int64) string {
	return string(strconv.AppendInt([]byte{scopeMark, kind}, id, 10))
}

// searchText is an event's text column in the full-text index: the text search looks
// at (tidings.Event.SearchText), without the scope tokens' mark, which the tokenizer
// would keep inside words. unicode61 cut words at it before the mark was a token
// character, so the words indexed are the same as they were.
func searchText(ev *tidings.Event) string {
	return strings.ReplaceAll(ev.SearchText(), string(scopeMark), " ")
}

// userToken is an event's user_id as a token of the scope column: _u and 16 hex
// digits of its SHA-256 (a user_id may hold any characters; the query checks the
// user_id itself too).
func userToken(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return string(scopeMark) + "u" + hex.EncodeToString(sum[:8])
}

// searchScope is the scope column of an event's row in the full-text index.
func searchScope(project, channel int64, tagIDs []int64, userID string) string {
	b := make([]byte, 0, 48+9*len(tagIDs))
	b = append(b, scopeMark, 'p')
	b = strconv.AppendInt(b, project, 10)
	b = append(b, ' ', scopeMark, 'c')
	b = strconv.AppendInt(b, channel, 10)
	for _, id := range tagIDs {
		b = append(b, ' ', scopeMark, 't')
		b = strconv.AppendInt(b, id, 10)
	}
	if userID != "" {
		b = append(b, ' ')
		b = append(b, userToken(userID)...)
	}
	return string(b)
}
