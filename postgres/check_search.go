package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// An event's vector is to_tsvector('simple', its words), the words folded in Go
// (searchText). The check makes the vector again from the event's text and compares.
// Folding in SQL is exact for an event whose text is ASCII and whose tags hold no
// escape (the common case): lower case in the C collation (ASCII letters only, whatever
// the database's locale), every run of other characters a space, and the tags' keys
// taken out of their JSON (no escape: no quote inside a string). Other events are folded
// in Go as at their write, read through a cursor, in chunks compared in SQL.
//
// Making a vector costs tens of µs an event, minutes at 10 million: a store of more
// than searchTextBudget events has a random sample of its events' pages compared, about
// that many events, so that the check keeps to its time; each run draws another.
// `tidings check --full` (Options.FullCheck) compares every event, however long.

// searchTextSQL is an event e's words as SQL folds them, for an event of ASCII text.
const searchTextSQL = `regexp_replace(lower((e.event || E'\n' || e.description || E'\n' || regexp_replace(e.tags, '"[^"]*":', ' ', 'g')) COLLATE "C"),
	'[^a-z0-9]+', ' ', 'g')`

// notASCII is true for an event whose text SQL cannot fold as Go does.
const notASCII = `(octet_length(e.event) <> length(e.event) OR octet_length(e.description) <> length(e.description)
	OR octet_length(e.tags) <> length(e.tags) OR strpos(e.tags, '\') > 0)`

// searchTextBudget is about how many events' vectors one check compares.
const searchTextBudget = 100_000

// searchChunk is how many events of other text one comparison sends back.
const searchChunk = 2_000

func checkSearchText(ctx context.Context, db *DB, tx pgx.Tx, r *tidings.CheckReport) error {
	add := func(where, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: "search.text", Where: where, Expected: expected, Found: found})
	}
	// The planner's estimate of the events suffices to size the sample.
	var estimate float64
	if err := tx.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'events'::regclass`).Scan(&estimate); err != nil {
		return err
	}
	sample := ""
	if estimate > db.textBudget && !db.fullCheck {
		sample = fmt.Sprintf(" TABLESAMPLE SYSTEM (%.6f)", 100*db.textBudget/estimate)
	}
	if err := eachRow(ctx, tx, `SELECT 'project ' || e.project_id || ' event ' || e.id, left(want::text, 200), left(e.search::text, 200)
		FROM (SELECT e.*, to_tsvector('simple', `+searchTextSQL+`) AS want FROM events e`+sample+`
			WHERE e.search IS NOT NULL AND NOT `+notASCII+`) e
		WHERE e.search <> e.want`, add); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DECLARE other_text NO SCROLL CURSOR FOR
		SELECT e.id, e.event, e.description, e.tags FROM events e`+sample+` WHERE e.search IS NOT NULL AND `+notASCII); err != nil {
		return err
	}
	for {
		var ids, texts []string
		rows, err := tx.Query(ctx, `FETCH `+itoa(searchChunk)+` FROM other_text`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, tags string
			var ev tidings.Event
			if err := rows.Scan(&id, &ev.Event, &ev.Description, &tags); err != nil {
				rows.Close()
				return err
			}
			if err := json.Unmarshal([]byte(tags), &ev.Tags); err != nil {
				add("event "+id, "tags a JSON object", tags) // the SQL pass found none to compare
				continue
			}
			ids, texts = append(ids, id), append(texts, searchText(&ev))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if err := eachRow(ctx, tx, `SELECT 'project ' || e.project_id || ' event ' || e.id, left(x.want::text, 200), left(e.search::text, 200)
			FROM (SELECT id, to_tsvector('simple', t) AS want FROM unnest($1::text[], $2::text[]) AS u(id, t)) x
			JOIN events e ON e.id = x.id WHERE e.search <> x.want`, add, ids, texts); err != nil {
			return err
		}
	}
}
