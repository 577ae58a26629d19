package postgres

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// An event's vector is to_tsvector('simple', its words), the words folded in Go
// (searchText). The check makes the vector again from the event's text and compares.
// Folding in SQL is exact for an event whose text is ASCII (the common case): lower
// case by translate (not lower(), which follows the locale) and every other character
// a space, in one pass over the events. An event with other text (or a \u escape in
// its tags, which may decode to any) is folded in Go as at its write; those are read
// through a cursor, in chunks compared in SQL.

// searchTextSQL is an event e's search text as searchText joins it: its name,
// description and tag values (json keeps them in the order sent), one a line.
const searchTextSQL = `e.event || E'\n' || e.description || coalesce((SELECT string_agg(E'\n' || j.value, '' ORDER BY j.n)
	FROM json_each_text(e.tags::json) WITH ORDINALITY AS j(key, value, n)), '')`

// notASCII is true for an event whose text SQL cannot fold as Go does.
const notASCII = `(octet_length(e.event) <> length(e.event) OR octet_length(e.description) <> length(e.description)
	OR octet_length(e.tags) <> length(e.tags) OR strpos(e.tags, '\u') > 0)`

// asciiFold is translate's two arguments: upper-case letters to lower case, and every
// other ASCII character but a digit to a space.
var asciiFold = func() [2]string {
	var from, to strings.Builder
	for c := byte(1); c < 0x80; c++ {
		switch {
		case c >= 'A' && c <= 'Z':
			from.WriteByte(c)
			to.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			from.WriteByte(c)
			to.WriteByte(' ')
		}
	}
	return [2]string{from.String(), to.String()}
}()

// searchChunk is how many events of other text one comparison sends back.
const searchChunk = 2_000

func checkSearchText(ctx context.Context, tx pgx.Tx, r *tidings.CheckReport) error {
	add := func(where, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: "search.text", Where: where, Expected: expected, Found: found})
	}
	if err := eachRow(ctx, tx, `SELECT 'project ' || project_id || ' event ' || id, left(want::text, 200), left(search::text, 200)
		FROM (SELECT e.id, e.project_id, e.search, to_tsvector('simple', translate(`+searchTextSQL+`, $1, $2)) AS want
			FROM events e WHERE e.search IS NOT NULL AND NOT `+notASCII+`) s
		WHERE search <> want`, add, asciiFold[0], asciiFold[1]); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DECLARE other_text NO SCROLL CURSOR FOR
		SELECT e.id, e.event, e.description, e.tags FROM events e WHERE e.search IS NOT NULL AND `+notASCII); err != nil {
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
