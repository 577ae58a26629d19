package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
