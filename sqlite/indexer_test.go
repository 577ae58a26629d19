package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// slowIndexStore opens a store whose indexer waits an hour after a commit: only a
// search (or Close) makes it index, so a test sees the events above the watermark.
func slowIndexStore(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(t.Context(), dir, Options{IndexDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func publishN(t *testing.T, db *DB, accountID int64, n int, name string) []*tidings.Event {
	t.Helper()
	var evs []*tidings.Event
	for i := range n {
		ev, err := db.PublishEvent(t.Context(), accountID, &tidings.NewEvent{Project: "shop", Channel: "orders",
			Event: fmt.Sprintf("%s %d", name, i), Parser: tidings.ParserText,
			Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func ftsRows(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.read.QueryRowContext(t.Context(), `SELECT count(*) FROM events_fts_docsize`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func mustCheck(t *testing.T, db *DB) {
	t.Helper()
	r, err := db.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("check: %v (+%d)", r.Problems, r.Omitted)
	}
}

func shopStore(t *testing.T, db *DB) int64 {
	t.Helper()
	a, err := db.CreateAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateProject(t.Context(), a.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateChannel(t.Context(), a.ID, "shop", "orders"); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// A publish is answered before its event is in the full-text index, yet a search made
// right after finds it: the search asks the indexer to catch up and waits for it.
func TestSearchFindsWhatWasJustPublished(t *testing.T) {
	t.Parallel()
	db := slowIndexStore(t, t.TempDir())
	acme := shopStore(t, db)
	publishN(t, db, acme, 20, "paid")
	if n := ftsRows(t, db); n != 0 {
		t.Fatalf("%d rows indexed before any search: the indexer did not trail (delay of an hour)", n)
	}
	mustCheck(t, db) // events above the watermark without rows are consistent
	if n := searchCount(t, db, "shop", "paid"); n != 20 {
		t.Fatalf("search right after publishing finds %d of 20", n)
	}
	if n := ftsRows(t, db); n != 20 {
		t.Fatalf("%d rows indexed after the search, want 20", n)
	}
	if lag, _ := db.SearchLag(); lag != 0 {
		t.Fatalf("%d events still to index", lag)
	}
	mustCheck(t, db)
}

// A process killed before its indexer ran leaves events above the watermark: the next
// start reads them back from the events table and indexes them, losing none.
func TestIndexerResumesFromItsWatermark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := slowIndexStore(t, dir)
	acme := shopStore(t, db)
	publishN(t, db, acme, 30, "deployed")
	db.ix.wrote.Store(false) // as if killed: Close does not index what is pending
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db2, err := Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if n, _ := db2.SearchLag(); n != 30 {
		t.Fatalf("after the restart %d events to index, want 30", n)
	}
	mustCheck(t, db2)
	if n := searchCount(t, db2, "shop", "deployed"); n != 30 {
		t.Fatalf("search after the restart finds %d of 30", n)
	}
	if n := searchCount(t, db2, "shop", "deployed plan:pro"); n != 30 {
		t.Fatalf("search with a tag after the restart finds %d of 30 (the scope read back lacks the tag)", n)
	}
	mustCheck(t, db2)
	// The events published after the restart come from memory, beside the read-back ones.
	publishN(t, db2, acme, 5, "refunded")
	if n := searchCount(t, db2, "shop", "refunded"); n != 5 {
		t.Fatalf("finds %d of 5", n)
	}
	mustCheck(t, db2)
}

// An event deleted before the indexer reached it gets no row: the step indexes only
// the events that exist.
func TestIndexerSkipsDeletedEvents(t *testing.T) {
	t.Parallel()
	db := slowIndexStore(t, t.TempDir())
	acme := shopStore(t, db)
	evs := publishN(t, db, acme, 10, "signup")
	for _, i := range []int{0, 4, 9} {
		if err := db.DeleteEvent(t.Context(), acme, "shop", evs[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := searchCount(t, db, "shop", "signup"); n != 7 {
		t.Fatalf("finds %d of the 7 events left", n)
	}
	if n := ftsRows(t, db); n != 7 {
		t.Fatalf("%d rows indexed, want 7", n)
	}
	mustCheck(t, db)
}

// Close indexes what its process committed, so the next start reads nothing back.
func TestCloseIndexesWhatItCommitted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := slowIndexStore(t, dir)
	acme := shopStore(t, db)
	publishN(t, db, acme, 12, "paid")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(context.Background(), dir, Options{IndexDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if n, _ := db2.SearchLag(); n != 0 {
		t.Fatalf("%d events left to index by a clean Close", n)
	}
	if n := ftsRows(t, db2); n != 12 {
		t.Fatalf("%d rows, want 12", n)
	}
}

// The indexer indexes in steps of at most indexChunk events and keeps going until it
// reaches the last; the lag metric is told about each step.
func TestIndexerStepsThroughABacklog(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes more than a step")
	}
	dir := t.TempDir()
	db := slowIndexStore(t, dir)
	acme := shopStore(t, db)
	const n = indexChunk + 300
	b := &tidings.NewBatch{}
	for i := range n {
		b.Events = append(b.Events, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: fmt.Sprintf("order %d", i), Parser: tidings.ParserText})
		if len(b.Events) == 100 || i == n-1 {
			if _, err := db.PublishEvents(t.Context(), acme, b); err != nil {
				t.Fatal(err)
			}
			b = &tidings.NewBatch{}
		}
	}
	db.ix.wrote.Store(false)
	db.Close()
	var steps, rows int
	done := make(chan int, 16)
	db2, err := Open(t.Context(), dir, Options{OnIndexed: func(n int, lag time.Duration) { done <- n }})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	deadline := time.After(time.Minute)
	for rows < n {
		select {
		case k := <-done:
			steps++
			rows += k
		case <-deadline:
			t.Fatalf("indexed %d of %d events in a minute", rows, n)
		}
	}
	if steps < 2 {
		t.Fatalf("%d events in %d step: a step covers at most %d", n, steps, indexChunk)
	}
	if lag, _ := db2.SearchLag(); lag != 0 {
		t.Fatalf("%d left", lag)
	}
	mustCheck(t, db2)
}

// The rows held for the indexer are bounded in bytes: past the bound, rows are not
// kept, and the step reads those events back — large descriptions cannot grow memory.
func TestIndexerMemoryIsBounded(t *testing.T) {
	t.Parallel()
	db := slowIndexStore(t, t.TempDir())
	db.ix.maxBytes = 3000 // before any publish: the writer reads it after a commit
	acme := shopStore(t, db)
	long := strings.Repeat("word ", 200) // 1 KB of text per event
	for i := range 12 {
		if _, err := db.PublishEvent(t.Context(), acme, &tidings.NewEvent{Project: "shop", Channel: "orders",
			Event: fmt.Sprintf("report %d", i), Description: long, Parser: tidings.ParserText}); err != nil {
			t.Fatal(err)
		}
	}
	// Every publish has returned, after its batch handed its rows over: read on this side.
	if db.ix.pendingBytes > 3000 || len(db.ix.pending) >= 12 {
		t.Fatalf("%d rows of %d bytes held: over the bound of 3000", len(db.ix.pending), db.ix.pendingBytes)
	}
	if n := searchCount(t, db, "shop", "report"); n != 12 {
		t.Fatalf("finds %d of 12, some read back", n)
	}
	mustCheck(t, db)
}

// The full-text index merges its segments 16 at a time, incrementally (migration
// 00016), and a search still finds what was published before and after merges.
func TestSearchIndexMergeSettings(t *testing.T) {
	t.Parallel()
	db := slowIndexStore(t, t.TempDir())
	for k, want := range map[string]int{"automerge": 16, "crisismerge": 64} {
		var got int
		if err := db.read.QueryRowContext(t.Context(), `SELECT v FROM events_fts_config WHERE k = ?`, k).Scan(&got); err != nil || got != want {
			t.Fatalf("%s = %d (%v), want %d", k, got, err, want)
		}
	}
	acme := shopStore(t, db)
	// 40 steps of one event each: 40 segments, merged on the way.
	for i := range 40 {
		publishN(t, db, acme, 1, fmt.Sprintf("merged%d", i))
		db.waitIndexed(t.Context())
	}
	for _, q := range []string{"merged0", "merged17", "merged39"} {
		if n := searchCount(t, db, "shop", q); n != 1 {
			t.Fatalf("search %q finds %d, want 1", q, n)
		}
	}
	mustCheck(t, db)
}

// A search waits for the index only so long (maxIndexWait): with the indexer stopped,
// it answers from what is indexed, without an error, and so does a search whose
// request ends while it waits.
func TestSearchWaitIsBounded(t *testing.T) {
	t.Parallel()
	db := slowIndexStore(t, t.TempDir())
	acme := shopStore(t, db)
	publishN(t, db, acme, 3, "indexed")
	if n := searchCount(t, db, "shop", "indexed"); n != 3 {
		t.Fatalf("search finds %d of 3", n)
	}
	ix := &db.ix
	ix.maxWait = 50 * time.Millisecond
	ix.closing.Do(func() { close(ix.stop) }) // the indexer stops; Close will not index
	<-ix.stopped
	publishN(t, db, acme, 2, "stranded")
	if n := searchCount(t, db, "shop", "stranded"); n != 0 {
		t.Fatalf("found %d events the index does not hold", n)
	}
	if n := searchCount(t, db, "shop", "indexed"); n != 3 {
		t.Fatalf("after the wait, the search finds %d of the 3 indexed", n)
	}
	ix.maxWait = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	done := make(chan struct{})
	go func() { db.waitIndexed(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a search whose request ended still waits for the index")
	}
	if lag, _ := db.SearchLag(); lag != 2 {
		t.Fatalf("lag %d, want the 2 unindexed events", lag)
	}
	mustCheck(t, db)
}
