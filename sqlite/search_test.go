package sqlite

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// searchCount counts the project's events a search finds, page by page.
func searchCount(t *testing.T, db *DB, project, q string) int {
	t.Helper()
	s, err := tidings.ParseSearch(q, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	eq := tidings.EventQuery{Project: project, Limit: 100}
	eq.AddSearch(s)
	n := 0
	for {
		p, err := db.ListEvents(t.Context(), 1, eq)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Events)
		if p.Next == "" {
			return n
		}
		eq.Before = p.Next
	}
}

// A store made before search gets its events indexed when it opens, newest first,
// in chunks that each commit, with its progress logged; a backfill stopped halfway
// goes on from where it was at the next start.
func TestSearchBackfill(t *testing.T) {
	old := backfillChunk
	backfillChunk = 100
	t.Cleanup(func() { backfillChunk = old })
	const n = 450
	dir := oldStore(t, n)
	var logged bytes.Buffer
	db, err := Open(context.Background(), dir, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "indexing the stored events for search") || !strings.Contains(logged.String(), "indexed the stored events") {
		t.Fatalf("backfill not announced:\n%s", logged.String())
	}
	check := func() {
		t.Helper()
		if got := searchCount(t, db, "shop", "event"); got != n {
			t.Fatalf("search finds %d of %d events", got, n)
		}
		if got := searchCount(t, db, "shop", `"event 77"`); got != 1 {
			t.Fatalf(`"event 77" finds %d events`, got)
		}
		if got := searchCount(t, db, "shop", "pro plan:pro"); got != n/2 {
			t.Fatalf("a tag's value with the tag: %d events, want %d", got, n/2)
		}
	}
	check()
	// Undo the index and stop a new backfill after one chunk, as a kill would.
	ctx := t.Context()
	if _, err := db.write.ExecContext(ctx, `DELETE FROM events_fts`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE search_backfill SET next_seq = (SELECT max(seq) FROM events)`); err != nil {
		t.Fatal(err)
	}
	if left, err := backfillOne(ctx, db.write); err != nil || left == 0 {
		t.Fatalf("one chunk: %d left, %v", left, err)
	}
	if got := searchCount(t, db, "shop", "event"); got != int(backfillChunk) {
		t.Fatalf("after one chunk search finds %d events, want %d", got, backfillChunk)
	}
	db.Close()
	// A management command leaves the rest to the server.
	if db, err = Open(ctx, dir, Options{SkipSearchBackfill: true}); err != nil {
		t.Fatal(err)
	}
	if got := searchCount(t, db, "shop", "event"); got != int(backfillChunk) {
		t.Fatalf("a management command indexed: search finds %d events, want %d", got, backfillChunk)
	}
	db.Close()
	if db, err = Open(ctx, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check()
	// New events are indexed as they are written.
	if _, err := db.PublishEvent(ctx, 1, &tidings.NewEvent{Project: "shop", Channel: "payments", Event: "Über neue Kunden",
		Parser: tidings.ParserText}); err != nil {
		t.Fatal(err)
	}
	if got := searchCount(t, db, "shop", "uber kund*"); got != 1 {
		t.Fatalf("a new event: found %d", got)
	}
}
