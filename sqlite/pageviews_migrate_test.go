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

// A dump names page views' minutes and days by the unix ms of their start, as the
// neutral shape (PostgreSQL's schema) does.
func TestDumpPageCountsInMS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acme := shopStore(t, db)
	at := time.Date(2026, 10, 1, 12, 34, 56, 0, time.UTC)
	views := &tidings.NewPageViews{Project: "shop", Views: []tidings.PageView{{UserID: "u", Path: "/", Timestamp: at}}}
	var pr tidings.Problems
	views.Check(&pr, time.Now(), false)
	if err := db.AddPageViews(ctx, acme, views); err != nil {
		t.Fatal(err)
	}
	d, err := db.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for table, want := range map[string]int64{
		"user_minutes": at.Truncate(time.Minute).UnixMilli(), "page_days": at.Truncate(24 * time.Hour).UnixMilli(),
		"page_user_days": at.Truncate(24 * time.Hour).UnixMilli(), "page_path_days": at.Truncate(24 * time.Hour).UnixMilli(),
	} {
		n := 0
		err := d.Rows(ctx, table, func(cols []string, row []any) error {
			n++
			for i, c := range cols {
				if (c == "minute" || c == "day") && row[i] != want {
					t.Errorf("%s.%s = %v, want %d", table, c, row[i], want)
				}
			}
			return nil
		})
		if err != nil || n != 1 {
			t.Fatalf("%s: %d rows, %v", table, n, err)
		}
	}
}
