package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/sqlite"
)

// storeSums are the SHA-256 of a data folder's database and WAL ("" for a WAL that does
// not exist or is empty: a reader of a store without one makes an empty one). The -shm
// file, the WAL's index that readers rebuild, is left out.
func storeSums(t *testing.T, dir string) [2][32]byte {
	t.Helper()
	var sums [2][32]byte
	for i, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, sqlite.FileName+suffix))
		if os.IsNotExist(err) || err == nil && len(b) == 0 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = sha256.Sum256(b)
	}
	return sums
}

// TestCheckLeavesStoreAlone is issue 35's: a store whose server was killed (its WAL
// holds the last commits), with the search index's watermark set back 5 events. The
// check named the damage, then mended it (its open ran the indexer) so that a second
// check said "ok", and wrote to the files. Now both checks name the same damage, and
// the database and the WAL are the same byte for byte after them; so after the lists.
func TestCheckLeavesStoreAlone(t *testing.T) {
	testbackend.SQLiteOnly(t)
	t.Parallel()
	dir := killedServerFolder(t)
	before := storeSums(t, dir)
	for i := range 2 {
		code, out, errs := runCLI(t, dir, "", "check")
		if code != 1 || strings.Count(out, "search.ahead\t") != 5 || !strings.Contains(errs, "inconsistencies found") {
			t.Fatalf("check %d: exit %d, stdout %q, stderr %q", i+1, code, out, errs)
		}
		if storeSums(t, dir) != before {
			t.Fatalf("check %d changed the store's files", i+1)
		}
	}
	for _, args := range [][]string{{"account", "list"}, {"token", "list"}, {"project", "list"}, {"project", "delete", testbackend.Project}} {
		code, out, errs := runCLI(t, dir, "", args...)
		if args[1] == "delete" && (code != 1 || !strings.Contains(errs, "with 1 channel and 20 events")) ||
			args[1] != "delete" && code != 0 {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
		if storeSums(t, dir) != before {
			t.Fatalf("%v changed the store's files", args)
		}
	}
}

// TestReadCommandsRefuseOldSchema: a store one migration behind is refused by check and
// the lists with what to do, and is not migrated; a backup copies it as it is.
func TestReadCommandsRefuseOldSchema(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	if code, _, errs := runCLI(t, loc, "", "account", "create", "acme"); code != 0 {
		t.Fatal(errs)
	}
	raw := openRaw(t, loc)
	defer raw.Close()
	version := func() (v int64) {
		t.Helper()
		if err := raw.QueryRow(`SELECT max(version_id) FROM goose_db_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	latest := version()
	if _, err := raw.Exec(`DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the store's schema is at migration %d, this tidings expects %d: start `tidings serve` once", latest-1, latest)
	for _, args := range [][]string{{"check"}, {"account", "list"}, {"token", "list"}, {"webhook", "list"}} {
		code, out, errs := runCLI(t, loc, "", args...)
		if code != 1 || out != "" || !strings.Contains(errs, want) {
			t.Fatalf("%v of an older schema: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if v := version(); v != latest-1 {
		t.Fatalf("the refused schema was migrated to %d", v)
	}
	if testbackend.IsURL(loc) {
		return
	}
	// A backup copies the store as it is, before an upgrade too.
	file := filepath.Join(t.TempDir(), sqlite.FileName)
	if code, out, errs := runCLI(t, loc, "", "backup", "--to", file); code != 0 {
		t.Fatalf("backup of an older schema: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if v := version(); v != latest-1 {
		t.Fatalf("the backup migrated the schema to %d", v)
	}
	copied := openRaw(t, filepath.Dir(file))
	defer copied.Close()
	var v int64
	if err := copied.QueryRow(`SELECT max(version_id) FROM goose_db_version`).Scan(&v); err != nil || v != latest-1 {
		t.Fatalf("the copy's schema is at %d (%v), want %d", v, err, latest-1)
	}
}

// TestCheckBesideServer: the check and the lists work while a server serves the same
// store, and the server goes on taking events after.
func TestCheckBesideServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := testbackend.Location(t)
	m := startServer(t, loc, nil)
	f := testbackend.Seed(t, m.store, "acme")
	events := make([]tidings.NewEvent, 30)
	for i := range events {
		events[i] = tidings.NewEvent{Event: fmt.Sprintf("Deployed %d", i), Parser: tidings.ParserText, UserID: "u-2",
			Tags: tidings.Tags{{Key: "env", Kind: tidings.KindString, Value: "prod"}}}
	}
	f.Publish(t, events...)
	code, out, errs := runCLI(t, loc, "", "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 30 events, ") {
		t.Fatalf("check beside the server: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, loc, "", "account", "list"); code != 0 || !strings.Contains(out, "acme") {
		t.Fatalf("account list beside the server: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := m.store.PublishEvent(ctx, f.Account.ID, &tidings.NewEvent{Project: testbackend.Project, Channel: testbackend.Channel,
		Event: "after", Parser: tidings.ParserText}); err != nil {
		t.Fatal(err)
	}
}

// killedServerFolder is a copy of a store's files as kill -9 of its server leaves them
// (the server's connections never close, its WAL holds the last commits): an account
// with 20 events, the search index's watermark set back 5 events.
func killedServerFolder(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	live := t.TempDir()
	s, err := sqlite.Open(ctx, live, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := testbackend.Seed(t, s, "acme")
	events := make([]tidings.NewEvent, 20)
	for i := range events {
		events[i] = tidings.NewEvent{Event: fmt.Sprintf("Paid %d", i), Parser: tidings.ParserText, UserID: "u-1"}
	}
	f.Publish(t, events...)
	for n, _ := s.SearchLag(); n > 0; n, _ = s.SearchLag() { // the indexer catches up
		time.Sleep(10 * time.Millisecond)
	}
	raw := openRaw(t, live)
	if _, err := raw.Exec(`UPDATE search_indexed SET seq = seq - 5`); err != nil {
		t.Fatal(err)
	}
	raw.Close() // not the last connection: the WAL stays

	// The files as kill -9 leaves them: the server's connections never close.
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(live, sqlite.FileName+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sqlite.FileName+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, sqlite.FileName+"-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the killed server's folder has no WAL (%v): the test would prove nothing", err)
	}
	return dir
}

// TestBackupLeavesStoreAlone: a backup of a killed server's folder copies what its WAL
// committed and leaves the folder's files as they were.
func TestBackupLeavesStoreAlone(t *testing.T) {
	testbackend.SQLiteOnly(t)
	t.Parallel()
	dir := killedServerFolder(t)
	before := storeSums(t, dir)
	copyDir := t.TempDir()
	if code, out, errs := runCLI(t, dir, "", "backup", "--to", filepath.Join(copyDir, sqlite.FileName)); code != 0 {
		t.Fatalf("backup: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if storeSums(t, dir) != before {
		t.Fatal("the backup changed the store's files")
	}
	if code, out, errs := runCLI(t, copyDir, "", "project", "list"); code != 0 || !strings.Contains(out, testbackend.Project+"  events=20 ") {
		t.Fatalf("the copy: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
