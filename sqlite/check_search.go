// The checks of what each full-text row holds. events_fts is contentless: a row's
// tokens cannot be read back, only each term's posting list (fts5vocab) and each row's
// number of tokens per column (events_fts_docsize). So the checks compare what those
// give with what the events say: each channel's rows by the sums of their seqs, as each
// project's (checkSearchScopes), each tag's number of rows, and each row's number of
// words.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tidings-dev/tidings"
)

// checkSearchTags checks that each tag's scope token is in as many full-text rows as
// the tag has indexed events: a row with another tag's token, or without its own,
// changes two counts. A token moved between two events of the same tag's count goes
// unnoticed; the sums that would see it cost a full-text query per tag (a store of 10
// million events has 200,000 tags).
func checkSearchTags(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	backfill, mark, err := searchMarks(ctx, tx)
	if err != nil {
		return err
	}
	// The tags' counts cover every event; take away those without a row.
	want := map[int64]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT id, count FROM tags WHERE count > 0`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		want[id] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Above the indexer's watermark: a few events, their tags read from their JSON.
	lag, err := searchRowsOf(ctx, tx, `SELECT seq, project_id, channel_id, event, description, tags, user_id, created_at
		FROM events WHERE seq > ?`, mark)
	if err != nil {
		return err
	}
	for _, row := range lag {
		for tok := range strings.FieldsSeq(row.scope) {
			if id, ok := scopeID(tok, 't'); ok {
				want[id]--
			}
		}
	}
	if backfill > 0 {
		// Still to backfill: any number of events, counted from the tag index.
		if err := eachCount(ctx, tx, `SELECT tag_id, count(*) FROM event_tags WHERE seq <= ? GROUP BY tag_id`, func(id, n int64) {
			want[id] -= n
		}, backfill); err != nil {
			return err
		}
	}
	lo, hi := string(scopeMark)+"t", string(scopeMark)+"u"
	// search_vocab is a view of the index's terms (migration 18): one row per term, with its rows.
	if err := eachCount(ctx, tx, `SELECT CAST(substr(term, 3) AS INTEGER), doc FROM search_vocab WHERE term >= ? AND term < ?`, func(id, n int64) {
		if want[id] != n {
			r.Add(tidings.Inconsistency{Kind: "search.tag", Where: fmt.Sprintf("tag %d", id),
				Expected: fmt.Sprintf("%d full-text rows with its scope token", want[id]), Found: fmt.Sprint(n)})
		}
		delete(want, id)
	}, lo, hi); err != nil {
		return err
	}
	for id, n := range want {
		if n != 0 {
			r.Add(tidings.Inconsistency{Kind: "search.tag", Where: fmt.Sprintf("tag %d", id),
				Expected: fmt.Sprintf("%d full-text rows with its scope token", n), Found: "0"})
		}
	}
	return nil
}

// scopeID reads the id of a scope token of kind (p, c or t).
func scopeID(tok string, kind byte) (int64, bool) {
	if len(tok) < 3 || tok[0] != scopeMark || tok[1] != kind {
		return 0, false
	}
	var id int64
	for _, c := range []byte(tok[2:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		id = id*10 + int64(c-'0')
	}
	return id, true
}

// eachCount calls fn with each row (id, n) of query.
func eachCount(ctx context.Context, tx *sql.Tx, query string, fn func(id, n int64), args ...any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		fn(id, n)
	}
	return rows.Err()
}

// checkSearchText checks each full-text row's number of words against its event's
// text, counted as the tokenizer counts (runs of letters and digits): a row of another
// event's text, or of none, has another number unless by chance. Only events whose
// text is ASCII are counted: beyond it, the tokenizer's Unicode tables (6.1) and Go's
// differ on which characters are letters. Both sides are read in seq order and
// merged, with no lookup per row.
func checkSearchText(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	backfill, mark, err := searchMarks(ctx, tx)
	if err != nil {
		return err
	}
	sizes, err := tx.QueryContext(ctx, `SELECT id, sz FROM events_fts_docsize WHERE id > ? AND id <= ? ORDER BY id`, backfill, mark)
	if err != nil {
		return err
	}
	defer sizes.Close()
	events, err := tx.QueryContext(ctx, `SELECT seq, event, description, tags FROM events WHERE seq > ? AND seq <= ? ORDER BY seq`, backfill, mark)
	if err != nil {
		return err
	}
	defer events.Close()
	var id int64 = -1
	var sz sql.RawBytes
	next := func() error {
		if !sizes.Next() {
			id = -1
			return sizes.Err()
		}
		return sizes.Scan(&id, &sz)
	}
	if err := next(); err != nil {
		return err
	}
	var name, desc, tags sql.RawBytes
	for events.Next() && id >= 0 {
		var seq int64
		if err := events.Scan(&seq, &name, &desc, &tags); err != nil {
			return err
		}
		for id >= 0 && id < seq { // a row of no event: checkSearchRows names it
			if err := next(); err != nil {
				return err
			}
		}
		if id != seq {
			continue // an event without its row: checkSearchRows names it
		}
		have, ok := varint(sz)
		want, ascii := asciiWords(name), true
		for _, part := range [][]byte{name, desc} {
			ascii = ascii && isASCII(part)
		}
		want += asciiWords(desc)
		ok = ok && eachTag(tags, func(_, value []byte) {
			ascii = ascii && isASCII(value)
			want += asciiWords(value)
		})
		if ok && ascii && have != want {
			r.Add(tidings.Inconsistency{Kind: "search.text", Where: fmt.Sprintf("seq %d", seq),
				Expected: fmt.Sprintf("a full-text row of %d words", want), Found: fmt.Sprint(have)})
		}
		if err := next(); err != nil {
			return err
		}
	}
	return events.Err()
}

// asciiWords counts the runs of ASCII letters and digits in s: the tokens unicode61
// makes of ASCII text (the scope mark, a token character, is never in the text).
func asciiWords(s []byte) int64 {
	var n int64
	in := false
	for _, c := range s {
		w := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

func isASCII(s []byte) bool {
	for _, c := range s {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// varint reads the first of SQLite's variable-length integers in b: a docsize row's
// number of tokens in its first column (text).
func varint(b []byte) (int64, bool) {
	var v int64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | int64(b[i]), true
		}
		v = v<<7 | int64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, true
		}
	}
	return 0, false
}
