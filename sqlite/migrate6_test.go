package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// oldStore makes a data folder at migration 5 (events keyed by their text ID, tags as
// text rows) holding n events, as a store made before the lean schema would.
func oldStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO accounts (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO projects (id, account_id, name, created_at) VALUES (1, 1, 'shop', 0)`,
		`INSERT INTO channels (id, project_id, name, created_at) VALUES (1, 1, 'payments', 0), (2, 1, 'signups', 0)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id, _ := tidings.NewEventID()
		ts := base.Add(time.Duration(i) * time.Minute).UnixMilli()
		plan := []string{"free", "pro"}[i%2]
		tags := fmt.Sprintf(`{"plan":%q,"n":%d}`, plan, i)
		if _, err := tx.Exec(`INSERT INTO events (id, project_id, channel_id, event, parser, tags, ts, created_at)
			VALUES (?, 1, ?, ?, 'text', ?, ?, ?)`, id, 1+i%2, fmt.Sprint("event ", i), tags, ts, ts); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"plan": plan, "n": fmt.Sprint(i)} {
			if _, err := tx.Exec(`INSERT INTO event_tags (event_id, key, value) VALUES (?, ?, ?)`, id, k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// smallChunks makes the migration copy 500 events per transaction for the test.
func smallChunks(t *testing.T) {
	old := migrationChunk
	migrationChunk = 500
	t.Cleanup(func() { migrationChunk = old })
}

// An existing store's events survive migration 6 whole: order, tags, counts, and
// the filters that now read the new indexes. Its progress is logged.
func TestMigration6KeepsEvents(t *testing.T) {
	smallChunks(t)
	n := 2*migrationChunk + 123 // more than two chunks
	dir := oldStore(t, n)
	var logged bytes.Buffer
	db, err := Open(context.Background(), dir, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !strings.Contains(logged.String(), "migration 6 rewrites every event") || !strings.Contains(logged.String(), fmt.Sprint("events=", n)) {
		t.Fatalf("migration not announced:\n%s", logged.String())
	}
	ctx := t.Context()
	if got, err := db.CountEvents(ctx, 1, "shop", ""); err != nil || got != n {
		t.Fatalf("count = %d, %v; want %d", got, err, n)
	}
	if got, _ := db.CountEvents(ctx, 1, "shop", "signups"); got != n/2 {
		t.Fatalf("signups = %d, want %d", got, n/2)
	}
	page, err := db.ListEvents(ctx, 1, tidings.EventQuery{Project: "shop", Limit: 3})
	if err != nil || len(page.Events) != 3 || page.Events[0].Event != fmt.Sprint("event ", n-1) {
		t.Fatalf("first page: %v %+v", err, page)
	}
	if tags := page.Events[0].Tags; len(tags) != 2 || tags[0].Key != "plan" || tags[1].Value != fmt.Sprint(n-1) {
		t.Fatalf("tags: %+v", tags)
	}
	one, err := db.ListEvents(ctx, 1, tidings.EventQuery{Project: "shop", Tags: []tidings.Tag{{Key: "n", Value: "77"}}, Limit: 10})
	if err != nil || len(one.Events) != 1 || one.Events[0].Event != "event 77" {
		t.Fatalf("rare tag: %v %+v", err, one)
	}
	pro, err := db.ListEvents(ctx, 1, tidings.EventQuery{Project: "shop", Channel: "signups", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, Limit: 5})
	if err != nil || len(pro.Events) != 5 || pro.Events[0].Channel != "signups" {
		t.Fatalf("common tag in a channel: %v %+v", err, pro)
	}
	ev, err := db.FindEvent(ctx, 1, "shop", page.Events[1].ID)
	if err != nil || ev.Event != page.Events[1].Event {
		t.Fatalf("find: %v %+v", err, ev)
	}
	deep, err := db.ListEvents(ctx, 1, tidings.EventQuery{Project: "shop", Before: page.Events[2].ID, Limit: 1})
	if err != nil || deep.Events[0].Event != fmt.Sprint("event ", n-4) {
		t.Fatalf("before: %v %+v", err, deep)
	}
	// New events go on after the migrated ones.
	tok := &tidings.NewEvent{Project: "shop", Channel: "payments", Event: "after", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}}
	if _, err := db.PublishEvent(ctx, 1, tok); err != nil {
		t.Fatal(err)
	}
	after, err := db.EventsAfter(ctx, 1, "shop", page.Events[0].ID, 10)
	if err != nil || len(after) != 1 || after[0].Event != "after" {
		t.Fatalf("after: %v %+v", err, after)
	}
}

// A migration killed half-way (some chunks copied) resumes where it stopped.
func TestMigration6Resumes(t *testing.T) {
	smallChunks(t)
	n := migrationChunk + 10
	dir := oldStore(t, n)
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(leanSchema); err != nil {
		t.Fatal(err)
	}
	tx, _ := raw.Begin()
	if _, err := copyChunk(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	raw.Close()
	db, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.CountEvents(t.Context(), 1, "shop", ""); err != nil || got != n {
		t.Fatalf("count = %d, %v; want %d", got, err, n)
	}
	var distinct int
	db.read.QueryRow(`SELECT count(DISTINCT id) FROM events`).Scan(&distinct)
	if distinct != n {
		t.Fatalf("%d distinct events, want %d", distinct, n)
	}
}
