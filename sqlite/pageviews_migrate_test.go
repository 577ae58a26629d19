package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// A store at migration 20 whose events name users, upgraded: migration 21 counts
// their events per minute and their sessions from them, and the check finds the
// store whole; events and views written after count on.
func TestMigration21CountsActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	acme := shopStore(t, db)
	base := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Hour)
	minutes := map[string][]int64{}
	for i := range 40 {
		user := fmt.Sprint("u-", i%3)
		// Gaps of 0 to 44 minutes: sessions split where a gap is over 30.
		at := base.Add(time.Duration(i*i%45+i*20) * time.Minute)
		if _, err := db.PublishEvent(ctx, acme, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "e",
			Parser: tidings.ParserText, UserID: user, Timestamp: at}); err != nil {
			t.Fatal(err)
		}
		minutes[user] = append(minutes[user], at.Unix()/60)
	}
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
	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustCheck(t, db)
	for user, ms := range minutes {
		want := tidings.CountSessions(sortedDistinct(ms))
		u, err := db.FindPerson(ctx, acme, "shop", user)
		if err != nil {
			t.Fatal(err)
		}
		if u.Sessions != want || want < 2 {
			t.Fatalf("%s: %d sessions after the migration, want %d (and more than one)", user, u.Sessions, want)
		}
	}
	views := &tidings.NewPageViews{Project: "shop", Views: []tidings.PageView{{UserID: "u-1", Path: "/", Timestamp: base.Add(-time.Hour)}}}
	var pr tidings.Problems
	views.Check(&pr, time.Now(), false)
	if err := db.AddPageViews(ctx, acme, views); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, db)
}

func sortedDistinct(ms []int64) []int64 {
	ms = slices.Clone(ms)
	slices.Sort(ms)
	return slices.Compact(ms)
}
