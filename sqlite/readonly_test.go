package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidings-dev/tidings"
)

// fileSums are the SHA-256 of the store's database and WAL files ("" for a file that
// does not exist or is empty: a reader of a store stopped cleanly, which has no WAL,
// makes an empty one, as SQLite's own shell does). The -shm file is left out: it is
// the WAL's index, which every reader may rebuild.
func fileSums(t *testing.T, dir string) [2]string {
	t.Helper()
	var sums [2]string
	for i, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, FileName+suffix))
		if os.IsNotExist(err) || err == nil && len(b) == 0 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		sums[i] = string(h[:])
	}
	return sums
}

// crashImage copies the files of an open store, as a kill -9 of its server leaves them:
// the database, the WAL holding its recent commits, and the WAL's index.
func crashImage(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(dir, FileName+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, FileName+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(filepath.Join(to, FileName+"-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the image holds no WAL to read (%v): the test would prove nothing", err)
	}
	return to
}

// TestReadOnlyLeavesFilesAlone: a damaged store whose server was killed (its WAL holds
// the commits) is checked twice read-only: both checks see the WAL's events and name
// the damage, nothing is mended, no write is possible, and the database and WAL files
// are the same byte for byte after (a connection that may write copies the WAL back
// and deletes it when it closes).
func TestReadOnlyLeavesFilesAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	live := checkedStore(t)
	// The live indexer would index the rows above the lowered watermark again when a
	// publish's wake-up is still pending, mending the damage before the image is taken.
	live.stopIndexer()
	if _, err := live.write.ExecContext(ctx, `UPDATE search_indexed SET seq = seq - 5`); err != nil {
		t.Fatal(err)
	}
	// The rows above the lowered watermark: what both checks must name (the store's
	// deletions leave gaps in the seqs).
	var wantAhead int
	if err := live.write.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE seq > (SELECT seq FROM search_indexed)`).Scan(&wantAhead); err != nil || wantAhead == 0 {
		t.Fatalf("no event above the lowered watermark (%v): the test would prove nothing", err)
	}
	var wantEvents int64
	if err := live.write.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&wantEvents); err != nil {
		t.Fatal(err)
	}
	dir := crashImage(t, filepath.Dir(liveFile(t, live)))
	before := fileSums(t, dir)
	var first []tidings.Inconsistency
	for i := range 2 {
		db, err := OpenReadOnly(ctx, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := db.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ahead := 0
		for _, p := range r.Problems {
			if p.Kind == "search.ahead" {
				ahead++
			}
		}
		if r.Events != wantEvents || ahead != wantAhead {
			t.Fatalf("check %d: %d events, problems %+v; want %d events and %d search.ahead", i+1, r.Events, r.Problems, wantEvents, wantAhead)
		}
		if i == 0 {
			first = r.Problems
		} else if !reflect.DeepEqual(first, r.Problems) {
			t.Fatalf("the second check named %+v, the first %+v", r.Problems, first)
		}
		if _, err := db.CreateAccount(ctx, "intruder"); err == nil || !strings.Contains(err.Error(), "readonly") {
			t.Fatalf("a write through a read-only store: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if after := fileSums(t, dir); after != before {
			t.Fatalf("check %d changed the store's files", i+1)
		}
	}
}

// liveFile is the database file of an open store.
func liveFile(t *testing.T, db *DB) string {
	t.Helper()
	var file string
	if err := db.read.QueryRowContext(context.Background(), `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestReadOnlyRefusesOldSchema: a store one migration behind is refused with what to do,
// and is not migrated; a folder without a store is refused too.
func TestReadOnlyRefusesOldSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before := fileSums(t, dir)
	want := latestMigration()
	_, err = OpenReadOnly(ctx, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema is at migration %d, this tidings expects %d", want-1, want)) ||
		!strings.Contains(err.Error(), "tidings serve") {
		t.Fatalf("an older schema: %v", err)
	}
	if after := fileSums(t, dir); after != before {
		t.Fatalf("refusing the store changed its files: %q %q", before, after)
	}
	if _, err := OpenReadOnly(ctx, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "holds no Tidings store") {
		t.Fatalf("a folder without a store: %v", err)
	}
}

// TestReadOnlyCheckBesideWrites: checks of a read-only store beside a writer that
// commits all the time each read one snapshot: none finds an inconsistency.
func TestReadOnlyCheckBesideWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	live := checkedStore(t)
	a, err := live.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	db, err := OpenReadOnly(ctx, filepath.Dir(liveFile(t, live)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if _, err := live.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "more",
				Parser: tidings.ParserText, UserID: "u-9", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 5 {
		r, err := db.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK() {
			t.Fatalf("check %d beside commits: %+v", i+1, r.Problems)
		}
	}
	stop.Store(true)
	wg.Wait()
}
