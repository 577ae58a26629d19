package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// searchText is what an event's tsvector is made of: its words, folded in Go as the
// queries are (tidings.SearchWords), so that accents and case match whatever the
// database's locale, and cut by spaces only.
func searchText(ev *tidings.Event) string {
	return strings.Join(tidings.SearchWords(ev.SearchText()), " ")
}

// tsQuery is the tsquery of search terms: each a phrase of its words (<->), the
// last one a prefix (:*) when the term ends in *; all terms must match (&). Words
// hold only letters and digits, so quoting them is enough.
func tsQuery(terms []tidings.Term) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteByte('(')
		for j, w := range t.Words {
			if j > 0 {
				b.WriteString(" <-> ")
			}
			b.WriteString("'" + w + "'")
			if t.Prefix && j == len(t.Words)-1 {
				b.WriteString(":*")
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// backfillChunk is how many events of a store older than search one transaction
// indexes (a var so that tests can cross chunks with few events).
var backfillChunk = 5_000

// backfillSearch indexes the events stored before migration 4, newest first, a
// chunk per transaction, logging progress every 2 s; search_backfill holds where it
// is, so a killed backfill resumes, and instances starting together take turns.
func (db *DB) backfillSearch(ctx context.Context, log *slog.Logger) error {
	var next string
	if err := db.row(ctx, `SELECT next_id FROM search_backfill`).Scan(&next); err != nil || next == "" {
		return err
	}
	var total int64
	if err := db.row(ctx, `SELECT count(*) FROM events WHERE search IS NULL`).Scan(&total); err != nil {
		return err
	}
	start, logged, done := time.Now(), time.Now(), int64(0)
	log.Info("store: indexing the stored events for search, newest first; the server starts when it is done", "events", total)
	for {
		n, more, err := db.backfillOne(ctx)
		if err != nil {
			return fmt.Errorf("index events for search: %w", err)
		}
		done += n
		if !more {
			break
		}
		if time.Since(logged) >= 2*time.Second {
			logged = time.Now()
			log.Info("store: indexing for search in progress", "events_done", done, "of", total)
		}
	}
	log.Info("store: indexed the stored events for search", "events", done, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// backfillOne indexes one chunk; more is false when none is left.
func (db *DB) backfillOne(ctx context.Context) (n int64, more bool, err error) {
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var next string
		if err := tx.QueryRow(ctx, `SELECT next_id FROM search_backfill FOR UPDATE`).Scan(&next); err != nil || next == "" {
			return err
		}
		type row struct {
			id string
			ev tidings.Event
		}
		rows, err := query(ctx, tx, func(r pgx.Row) (row, error) {
			var x row
			var tags string
			if err := r.Scan(&x.id, &x.ev.Event, &x.ev.Description, &tags); err != nil {
				return x, err
			}
			return x, json.Unmarshal([]byte(tags), &x.ev.Tags)
		}, `SELECT id, event, description, tags FROM events WHERE id < $1 ORDER BY id DESC LIMIT $2`, next, backfillChunk)
		if err != nil {
			return err
		}
		ids, texts := make([]string, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			ids[i], texts[i] = r.id, searchText(&r.ev)
		}
		if _, err := tx.Exec(ctx, `UPDATE events SET search = to_tsvector('simple', x.t)
			FROM unnest($1::text[], $2::text[]) AS x(id, t) WHERE events.id = x.id AND events.search IS NULL`, ids, texts); err != nil {
			return err
		}
		next = ""
		if len(rows) == backfillChunk {
			next, more = rows[len(rows)-1].id, true
		}
		n = int64(len(rows))
		_, err = tx.Exec(ctx, `UPDATE search_backfill SET next_id = $1`, next)
		return err
	})
	return n, more, err
}

// searchCandidates is the most events a word search reads from a set it cannot read
// in order (a tag's, a channel's, the GIN index's matches) before sorting them by
// timestamp; above it, the search walks the project's events newest first instead.
var searchCandidates int64 = 20_000 // a var so that tests can force each source

// Where a word search reads its candidates from.
const (
	fromProject = iota // walk the project's events newest first, checking each
	fromTag            // the rarest filter tag's events
	fromChannel        // the channel's events
	fromWords          // the GIN index's matches of the words
	fromUser           // the users' events (a journey), by events_user
)

type source struct {
	kind int
	tag  int // index in tags, for fromTag
}

// searchSource picks the smallest of the filter's sets (tag_counts, event_counts, and
// the planner's estimate of the words' matches) when it is small enough to read whole;
// else the walk, which finds a common word's newest matches at once. PostgreSQL's own
// choice, a walk whenever LIMIT is small, read all 10 million events for a word that
// no event has.
func (db *DB) searchSource(ctx context.Context, project, channel int64, tags []tidings.Tag, terms []tidings.Term, users []string) (source, error) {
	best, src := searchCandidates, source{kind: fromProject}
	if len(users) > 0 {
		// Each user's events are read in order from their own index.
		return source{kind: fromUser}, nil
	}
	if len(tags) > 0 {
		counts, err := db.tagCounts(ctx, project, tags)
		if err != nil {
			return src, err
		}
		for i, n := range counts {
			if n <= best {
				best, src = n, source{kind: fromTag, tag: i}
			}
		}
	}
	if channel != 0 {
		var n int64
		if err := db.row(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts WHERE channel_id = $1`, channel).Scan(&n); err != nil {
			return src, err
		}
		if n <= best {
			best, src = n, source{kind: fromChannel}
		}
	}
	var plan []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	var raw []byte
	if err := db.row(ctx, `EXPLAIN (FORMAT JSON) SELECT 1 FROM events WHERE search @@ to_tsquery('simple', $1)`,
		tsQuery(terms)).Scan(&raw); err != nil {
		return src, err
	}
	if err := json.Unmarshal(raw, &plan); err == nil && len(plan) == 1 && int64(plan[0].Plan.Rows) <= best {
		src = source{kind: fromWords}
	}
	return src, nil
}

// searchQuery builds a word search's page: newest first by timestamp, ties by id, as
// the feed lists. The walk reads the project's time index in order, checking each event. Every other source is
// read whole, with every condition, in a materialised CTE, and only its matches are
// sorted: left to itself, the planner would walk the id index for these too, guessing
// that the LIMIT is reached soon, and read hundreds of thousands of rows.
func searchQuery(project, channel int64, event, prio string, tags []tidings.Tag, terms []tidings.Term, users []string, since, until time.Time, before *cursor, limit int, src source) (string, []any) {
	var sb strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	proj := arg(project)
	var words string
	if len(terms) > 0 {
		words = arg(tsQuery(terms))
	}
	conditions := func() {
		if words != "" {
			match := `e.search @@ to_tsquery('simple', ` + words + `)`
			if src.kind == fromTag || src.kind == fromChannel || src.kind == fromUser {
				// Checked on the candidates only: as a plain condition the planner would also
				// read the GIN index's million matches of a common word to intersect them.
				match = `coalesce(` + match + `, false)`
			}
			sb.WriteString(` AND ` + match)
		}
		if channel != 0 {
			sb.WriteString(` AND e.channel_id = ` + arg(channel))
		}
		if event != "" {
			sb.WriteString(` AND e.event = ` + arg(event))
		}
		sb.WriteString(prio)
		if before != nil {
			sb.WriteString(` AND (e.ts, e.id) < (` + arg(before.ts) + `, ` + arg(before.id) + `)`)
		}
		timeRange(&sb, "e", since, until, arg)
		for i, t := range tags {
			if src.kind == fromTag && i == src.tag {
				continue
			}
			sb.WriteString(` AND (e.tags::jsonb ->> ` + arg(t.Key) + `) = ` + arg(t.Value))
		}
	}
	if src.kind == fromUser {
		// Each user's newest matches from its index, then the newest of those: at most
		// users × limit rows, however many events a group's members have.
		lim := arg(limit)
		sb.WriteString(`WITH top AS (SELECT x.id, x.ts FROM unnest(` + arg(users) + `::text[]) AS m(user_id)
			CROSS JOIN LATERAL (SELECT e.id, e.ts FROM events e WHERE e.project_id = ` + proj + ` AND e.user_id = m.user_id AND e.user_id <> ''`) // <> '': events_user is partial
		conditions()
		sb.WriteString(` ORDER BY e.ts DESC, e.id DESC LIMIT ` + lim + `) x ORDER BY x.ts DESC, x.id DESC LIMIT ` + lim + `)
		SELECT ` + eventFields + ` FROM top JOIN events e ON e.id = top.id JOIN channels c ON c.id = e.channel_id ORDER BY e.ts DESC, e.id DESC`)
		return sb.String(), args
	}
	if src.kind == fromProject {
		sb.WriteString(`SELECT ` + eventColumns + ` WHERE e.project_id = ` + proj)
		conditions()
		sb.WriteString(` ORDER BY e.ts DESC, e.id DESC LIMIT ` + arg(limit))
		return sb.String(), args
	}
	sb.WriteString(`WITH cand AS MATERIALIZED (SELECT e.id, e.ts FROM `)
	switch src.kind {
	case fromTag:
		t := tags[src.tag]
		sb.WriteString(`event_tags d JOIN events e ON e.id = d.event_id WHERE d.project_id = ` + proj +
			` AND d.key = ` + arg(t.Key) + ` AND d.value = ` + arg(t.Value) + ` AND e.project_id = ` + proj)
	default: // fromChannel (its condition is among the others), fromWords
		sb.WriteString(`events e WHERE e.project_id = ` + proj)
	}
	conditions()
	sb.WriteString(`), top AS (SELECT id FROM cand ORDER BY ts DESC, id DESC LIMIT ` + arg(limit) + `)
		SELECT ` + eventFields + ` FROM top JOIN events e ON e.id = top.id JOIN channels c ON c.id = e.channel_id ORDER BY e.ts DESC, e.id DESC`)
	return sb.String(), args
}
