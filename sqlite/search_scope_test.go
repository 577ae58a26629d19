package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// scopeWordStore is a project whose every event has the scope tokens of project 1,
// channel 1, tag 1 and user u-1, and a few whose text has those tokens spelled as
// words (as the scope column spelled them before the mark, and with the mark).
// It returns the user's old token as a word.
func scopeWordStore(t *testing.T) (*DB, string) {
	t.Helper()
	db := slowIndexStore(t, t.TempDir())
	acme := shopStore(t, db)
	user := strings.TrimPrefix(userToken("u-1"), string(scopeMark))
	for i, name := range []string{"paid", "deploy p1 done", "cache c1 hit", "tier t1", "seen " + user, "snake_case_p1", "paid", "paid"} {
		if _, err := db.PublishEvent(t.Context(), acme, &tidings.NewEvent{Project: "shop", Channel: "orders",
			Event: name, Description: fmt.Sprint("event ", i), Parser: tidings.ParserText, UserID: "u-1",
			Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}}); err != nil {
			t.Fatal(err)
		}
	}
	db.waitIndexed(t.Context())
	var p, c, tag int64
	if err := db.read.QueryRow(`SELECT e.project_id, e.channel_id, (SELECT min(tag_id) FROM event_tags) FROM events e LIMIT 1`).Scan(&p, &c, &tag); err != nil || p != 1 || c != 1 || tag != 1 {
		t.Fatalf("project %d, channel %d, tag %d (%v): the test wants 1, 1, 1", p, c, tag, err)
	}
	return db, user
}

// Words spelled like scope tokens find the events whose text has them, and no other:
// the scope tokens are not words.
func TestSearchScopeWordsFindText(t *testing.T) {
	t.Parallel()
	db, user := scopeWordStore(t)
	for q, want := range map[string]int{"p1": 2, "c1": 1, "t1": 1, user: 1, "_p1": 2, "snake": 1, "case": 1, "paid": 3,
		"paid plan:pro": 3, `"deploy p1"`: 1} {
		if got := searchCount(t, db, "shop", q); got != want {
			t.Errorf("search %q finds %d events, want %d", q, got, want)
		}
	}
}

// ftsVocab opens a connection with a temp fts5vocab table over events_fts, one row
// per term and column: what FTS5 reads for a term is its posting list, the rows of
// every column that hold it.
func ftsVocab(t *testing.T, db *DB) *sql.Conn {
	t.Helper()
	conn, err := db.read.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(t.Context(), `CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_vocab USING fts5vocab(main, events_fts, col)`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// The structure behind TestSearchScopeWordsFindText, independent of time: no term is
// in both columns, so a word of a query (every text phrase of matchExpr) reads
// posting lists of text only — before the mark, the word p1 read one entry for each
// event of project 1.
func TestSearchScopeTokensAreNotWords(t *testing.T) {
	t.Parallel()
	db, user := scopeWordStore(t)
	conn := ftsVocab(t, db)
	var shared []string
	rows, err := conn.QueryContext(t.Context(), `SELECT term FROM temp.fts_vocab WHERE col = 'text' INTERSECT SELECT term FROM temp.fts_vocab WHERE col = 'scope'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var term string
		rows.Scan(&term)
		shared = append(shared, term)
	}
	rows.Close()
	if len(shared) > 0 {
		t.Errorf("terms in both the text and the scope column: %q", shared)
	}
	for w, want := range map[string]int{"p1": 2, "c1": 1, "t1": 1, user: 1} {
		s, err := tidings.ParseSearch(w, db.now())
		if err != nil {
			t.Fatal(err)
		}
		expr := matchExpr(feedFilter{project: 1, terms: s.Terms})
		phrase := expr[strings.Index(expr, `text:"`)+len(`text:"`) : len(expr)-1]
		var docs, scopeDocs int
		if err := conn.QueryRowContext(t.Context(), `SELECT coalesce(sum(doc), 0), coalesce(sum(doc) FILTER (WHERE col = 'scope'), 0)
			FROM temp.fts_vocab WHERE term = ?`, phrase).Scan(&docs, &scopeDocs); err != nil {
			t.Fatal(err)
		}
		if docs != want || scopeDocs != 0 {
			t.Errorf("%s: the posting list of %q has %d rows, %d of them scope's; want only the text's", expr, phrase, docs, scopeDocs)
		}
	}
}

// A store at migration 17, its full-text rows made with the old tokens (p1 c1 as
// words), upgraded: every event is found again by its words, through the backfill,
// no old token is left, and the check finds the store whole.
func TestMigration18RebuildsSearch(t *testing.T) {
	t.Parallel()
	old := backfillChunk
	backfillChunk = 50 // several chunks
	t.Cleanup(func() { backfillChunk = old })
	dir := t.TempDir()
	db := slowIndexStore(t, dir)
	acme := shopStore(t, db)
	const n = 180
	publishN(t, db, acme, n, "order")
	db.Close()

	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub, goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(migration6()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), 17); err != nil {
		t.Fatal(err)
	}
	// As the code before migration 18 indexed them: scope tokens without the mark.
	for _, q := range []string{
		`INSERT INTO events_fts (rowid, text, scope) SELECT seq, event, 'p' || project_id || ' c' || channel_id || ' t1' FROM events`,
		`UPDATE search_backfill SET next_seq = 0`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	// A management command opens the store first: it leaves the events to the
	// backfill, and the check finds the store whole meanwhile, with events
	// published since (waiting for the indexer, which a search would hurry) too.
	db, err = Open(context.Background(), dir, Options{SkipSearchBackfill: true, IndexDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got := ftsRows(t, db); got != 0 {
		t.Fatalf("%d full-text rows before the backfill, want none", got)
	}
	mustCheck(t, db)
	publishN(t, db, acme, 3, "late")
	if lag, _ := db.SearchLag(); lag != 3 {
		t.Fatalf("%d events not indexed, want the 3 published", lag)
	}
	mustCheck(t, db)
	db.Close()

	db, err = Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := ftsRows(t, db); got != n+3 {
		t.Fatalf("%d full-text rows after the upgrade, want %d", got, n+3)
	}
	if got := searchCount(t, db, "shop", "late"); got != 3 {
		t.Fatalf("search finds %d of the 3 late events", got)
	}
	if got := searchCount(t, db, "shop", "order"); got != n {
		t.Fatalf("search finds %d of %d events", got, n)
	}
	for _, q := range []string{"0", "77", fmt.Sprint(n - 1)} {
		if got := searchCount(t, db, "shop", "order "+q); got != 1 {
			t.Fatalf("search %q finds %d events, want 1", "order "+q, got)
		}
	}
	if got := searchCount(t, db, "shop", "order plan:pro"); got != n {
		t.Fatalf("search with a tag finds %d of %d events", got, n)
	}
	conn := ftsVocab(t, db)
	var stale int
	if err := conn.QueryRowContext(t.Context(), `SELECT count(*) FROM temp.fts_vocab WHERE col = 'scope' AND term NOT LIKE '\_%' ESCAPE '\'`).Scan(&stale); err != nil || stale != 0 {
		t.Fatalf("%d scope terms without the mark (%v)", stale, err)
	}
	mustCheck(t, db)
}
