package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidings-dev/tidings"
)

// hourCountsByEvents is the query that counts the events of every hour again, the long
// way: a grouping of all events.
const hourCountsByEvents = `WITH actual AS (SELECT channel_id, ts - ts % 3600000 AS hour, count(*) AS n FROM events GROUP BY 1, 2)
	SELECT 'channel ' || coalesce(a.channel_id, c.channel_id) || ' hour ' || coalesce(a.hour, c.hour), coalesce(a.n, 0), coalesce(c.n, 0)
	FROM actual a FULL JOIN event_counts c ON c.channel_id = a.channel_id AND c.hour = a.hour
	WHERE coalesce(a.n, 0) != coalesce(c.n, 0)`

// checkHourCounts counts, for each stored hourly count, the channel's events of that
// hour through the channel's index; when every count is right and they add up to all
// events, no hour lacks its count. Only a store where they do not is grouped hour by
// hour to name what is missing.
func checkHourCounts(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT c.channel_id, c.hour, c.n,
		(SELECT count(*) FROM events e WHERE e.channel_id = c.channel_id AND e.ts >= c.hour AND e.ts < c.hour + 3600000)
		FROM event_counts c`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var counted int64 // the events in hours that have a count
	for rows.Next() {
		var channel, hour, n, actual int64
		if err := rows.Scan(&channel, &hour, &n, &actual); err != nil {
			return err
		}
		counted += actual
		if n == 0 && actual == 0 { // a deletion removes the row of an hour it empties
			r.Add(tidings.Inconsistency{Kind: "hour_count.zero", Where: fmt.Sprintf("channel %d hour %d", channel, hour), Expected: "no row", Found: "a count of 0"})
		} else if n != actual {
			r.Add(tidings.Inconsistency{Kind: "hour_count", Where: fmt.Sprintf("channel %d hour %d", channel, hour), Expected: fmt.Sprint(actual), Found: fmt.Sprint(n)})
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var events int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil || events == counted {
		return err
	}
	// Some events are in hours without a count: name those hours.
	return eachRow(ctx, tx, hourCountsByEvents+` AND c.n IS NULL`, func(where, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: "hour_count", Where: where, Expected: expected, Found: found})
	})
}

// checkSearchRows checks that the full-text index has a row for each event between the
// backfill's watermark and the indexer's, and for no event that is gone or above the
// indexer's watermark: one pass over the events counts the rows found; the rows beyond
// those are named only when there are any.
func checkSearchRows(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	backfill, indexed, err := searchMarks(ctx, tx)
	if err != nil {
		return err
	}
	var last int64
	if err := tx.QueryRowContext(ctx, sqlLastSeq).Scan(&last); err != nil {
		return err
	}
	if indexed > last {
		r.Add(tidings.Inconsistency{Kind: "search.watermark", Where: "search_indexed",
			Expected: fmt.Sprintf("at most the last event's seq, %d", last), Found: fmt.Sprint(indexed)})
	}
	var want, have [3]int64
	if err := tx.QueryRowContext(ctx, `SELECT `+fmt.Sprintf(seqSums, "seq")+` FROM events INDEXED BY events_project_ts WHERE seq > ? AND seq <= ?`, backfill, indexed).
		Scan(&want[0], &want[1], &want[2]); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT `+fmt.Sprintf(seqSums, "id")+` FROM events_fts_docsize`).Scan(&have[0], &have[1], &have[2]); err != nil {
		return err
	}
	if want == have {
		return nil
	}
	add := func(kind string) func(where, expected, found string) {
		return func(where, expected, found string) {
			r.Add(tidings.Inconsistency{Kind: kind, Where: where, Expected: expected, Found: found})
		}
	}
	before := len(r.Problems) + int(r.Omitted)
	if err := eachRow(ctx, tx, `SELECT 'seq ' || e.seq || ' project ' || e.project_id, 'a row of the full-text index', 'none'
		FROM events e WHERE e.seq > ? AND e.seq <= ? AND NOT EXISTS (SELECT 1 FROM events_fts_docsize d WHERE d.id = e.seq)`,
		add("search.missing"), backfill, indexed); err != nil {
		return err
	}
	if err := eachRow(ctx, tx, `SELECT 'seq ' || d.id, 'an event', 'none'
		FROM events_fts_docsize d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = d.id)`, add("search.orphan")); err != nil {
		return err
	}
	if err := eachRow(ctx, tx, `SELECT 'seq ' || d.id, 'no row: the indexer is at seq `+fmt.Sprint(indexed)+`', 'a row'
		FROM events_fts_docsize d WHERE d.id > ? AND EXISTS (SELECT 1 FROM events e WHERE e.seq = d.id)`, add("search.ahead"), indexed); err != nil {
		return err
	}
	if len(r.Problems)+int(r.Omitted) == before {
		r.Add(tidings.Inconsistency{Kind: "search", Where: fmt.Sprintf("events up to seq %d", backfill),
			Expected: "no rows of the full-text index (the backfill has yet to index them)", Found: "some"})
	}
	return nil
}

// searchMarks reads the full-text index's two watermarks: the backfill's (the events up
// to it are still to index) and the indexer's (the events above it are still to index).
func searchMarks(ctx context.Context, tx *sql.Tx) (backfill, indexed int64, err error) {
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(next_seq), 0) FROM search_backfill`).Scan(&backfill); err != nil {
		return 0, 0, err
	}
	err = tx.QueryRowContext(ctx, sqlSearchMark).Scan(&indexed)
	return backfill, indexed, err
}

// seqSums sums a column of seqs: their count, and sums of seq and of seq² modulo a
// prime. Two sets of seqs that differ have the same count and sums by chance about once
// in 2^60.
const seqSums = `count(*), coalesce(sum(%[1]s %% 2147483647), 0), coalesce(sum((%[1]s %% 2147483629) * (%[1]s %% 2147483629) %% 2147483629), 0)`

// checkSearchScopes checks, project by project and channel by channel, that the
// full-text rows carrying its scope token are those of its events between the two
// watermarks: their number and two sums of their seqs must match; only a project or
// channel where they do not is read row by row, to name the rows of other events.
func checkSearchScopes(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	return checkScopeSums(ctx, tx, r, `SELECT 'p', id FROM projects UNION ALL SELECT 'c', id FROM channels`)
}

// checkScopeSums checks the scopes that query lists: ('p', project id) or ('c', channel id).
func checkScopeSums(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport, query string) error {
	type scope struct {
		kind    byte
		id      int64
		problem string // the Inconsistency's kind
		column  string // the events' column
		noun    string
	}
	var scopes []scope
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	for rows.Next() {
		var kind string
		var id int64
		if err := rows.Scan(&kind, &id); err != nil {
			rows.Close()
			return err
		}
		if kind == "p" {
			scopes = append(scopes, scope{'p', id, "search.scope", "project_id", "project"})
		} else {
			scopes = append(scopes, scope{'c', id, "search.channel", "channel_id", "channel"})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	backfill, mark, err := searchMarks(ctx, tx)
	if err != nil {
		return err
	}
	for _, sc := range scopes {
		match := `scope:"` + scopeToken(sc.kind, sc.id) + `"`
		var indexed, want [3]int64
		if err := tx.QueryRowContext(ctx, `SELECT `+fmt.Sprintf(seqSums, "rowid")+` FROM events_fts WHERE events_fts MATCH ?`, match).
			Scan(&indexed[0], &indexed[1], &indexed[2]); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT `+fmt.Sprintf(seqSums, "seq")+` FROM events WHERE `+sc.column+` = ? AND seq > ? AND seq <= ?`, sc.id, backfill, mark).
			Scan(&want[0], &want[1], &want[2]); err != nil {
			return err
		}
		if indexed == want {
			continue
		}
		before := len(r.Problems) + int(r.Omitted)
		err := eachRow(ctx, tx, `SELECT 'seq ' || s.rowid, 'an event of `+sc.noun+` `+fmt.Sprint(sc.id)+`',
			coalesce('an event of `+sc.noun+` ' || e.`+sc.column+`, 'no event')
			FROM events_fts s LEFT JOIN events e ON e.seq = s.rowid
			WHERE events_fts MATCH '`+match+`' AND e.`+sc.column+` IS NOT `+fmt.Sprint(sc.id),
			func(where, expected, found string) {
				r.Add(tidings.Inconsistency{Kind: sc.problem, Where: where, Expected: expected, Found: found})
			})
		if err != nil {
			return err
		}
		if len(r.Problems)+int(r.Omitted) == before {
			r.Add(tidings.Inconsistency{Kind: sc.problem, Where: fmt.Sprintf("%s %d", sc.noun, sc.id),
				Expected: fmt.Sprintf("%d rows with its scope, one per event after seq %d up to %d", want[0], backfill, mark),
				Found:    fmt.Sprintf("%d rows, of other events", indexed[0])})
		}
	}
	return nil
}
