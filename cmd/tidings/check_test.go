package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/sqlite"
)

// TestCheckCommand: `tidings check` passes a consistent store with a one-line summary
// (exit 0), and lists what is wrong in a damaged one (exit 1).
func TestCheckCommand(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	code, _, errs := runCLI(t, loc, "", "account", "create", "acme")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"project", "create", "shop"}, {"channel", "create", "shop", "orders"}} {
		if code, _, errs := runCLI(t, loc, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	s, err := openStore(ctx, Config{Data: loc, DatabaseURL: dbURL(loc)}, nil, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "Paid", Parser: tidings.ParserText,
			UserID: "u-1", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: []string{"pro", "free"}[i%2]}}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	code, out, errs := runCLI(t, loc, "", "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 20 events, ") || strings.Count(out, "\n") != 1 || errs != "" {
		t.Fatalf("check of a consistent store: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	// Damage derived structures behind the store's back: counts, and one row of the tag
	// index gone.
	raw := openRaw(t, loc)
	dropTagRow := `DELETE FROM event_tags WHERE seq = (SELECT max(seq) FROM event_tags)`
	if testbackend.IsURL(loc) {
		dropTagRow = `DELETE FROM event_tags WHERE event_id = (SELECT max(event_id) FROM event_tags)`
	}
	for _, q := range []string{`UPDATE event_counts SET n = n + 3`, `UPDATE people SET events = 7`, dropTagRow} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	code, out, errs = runCLI(t, loc, "", "check")
	if code != 1 || !strings.Contains(out, "hour_count\t") || !strings.Contains(out, "user_count\tproject ") ||
		!strings.Contains(out, "expected 20\tfound 7") || !strings.Contains(out, "tag_index.missing\t") || !strings.Contains(out, "tag_count\t") ||
		!strings.Contains(errs, "4 inconsistencies found") {
		t.Fatalf("check of a damaged store: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func dbURL(loc string) string {
	if testbackend.IsURL(loc) {
		return loc
	}
	return ""
}

// openRaw opens the store's database directly, bypassing the store.
func openRaw(t *testing.T, loc string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", loc
	if !testbackend.IsURL(loc) {
		driver, dsn = "sqlite", "file:"+filepath.Join(loc, sqlite.FileName)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestManagementNeedsDataFolder: only serve makes a data folder; any other command
// given one that does not exist fails and names it.
func TestManagementNeedsDataFolder(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	for _, args := range [][]string{{"check"}, {"account", "list"}, {"token", "list"}} {
		code, out, errs := runCLI(t, missing, "", args...)
		if code == 0 || out != "" || !strings.Contains(errs, "no data folder at "+missing) || !strings.Contains(errs, "--data") {
			t.Fatalf("%v on a missing folder: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
