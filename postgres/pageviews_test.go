package postgres_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
)

// pagesStore is a store with account acme (project shop, channel orders) and a second
// account with a project of the same name, to show that nothing crosses accounts.
func pagesStore(t *testing.T) (*postgres.DB, *tidings.Account, *tidings.Account) {
	t.Helper()
	ctx := context.Background()
	db := open(t)
	var accounts []*tidings.Account
	for _, name := range []string{"acme", "globex"} {
		a, err := db.CreateAccount(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateProject(ctx, a.ID, "shop"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateChannel(ctx, a.ID, "shop", "orders"); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}
	return db, accounts[0], accounts[1]
}

// addViews checks views as POST /v1/page does, from a page on shop.example, and stores them.
func addViews(t *testing.T, db *postgres.DB, accountID int64, views ...tidings.PageView) {
	t.Helper()
	c := &tidings.NewPageViews{Project: "shop", Views: views, Host: "shop.example"}
	var p tidings.Problems
	c.Check(&p, time.Now(), true)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.AddPageViews(context.Background(), accountID, c); err != nil {
		t.Fatal(err)
	}
}

func mustCheck(t *testing.T, db *postgres.DB, step string) {
	t.Helper()
	r, err := db.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("%s: check: %v", step, r.Problems)
	}
}

// day0 is a UTC midnight 10 days ago: the views below are in its days.
func day0() time.Time { return time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -10) }

func TestPageViewsListAndPeople(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, globex := pagesStore(t)
	d := day0()
	// ada: 25 views, one a minute from 10:00 (one session), then 3 at 15:00 (another).
	var views []tidings.PageView
	for i := range 25 {
		views = append(views, tidings.PageView{UserID: "ada", Path: fmt.Sprintf("/docs/%d?utm_source=x&email=a@b", i%3),
			Title: "Docs", Referrer: "https://shop.example/", Timestamp: d.Add(10*time.Hour + time.Duration(i)*time.Minute)})
	}
	for i := range 3 {
		views = append(views, tidings.PageView{UserID: "ada", Path: "/pricing", Referrer: "https://news.example.org/item?id=1",
			Timestamp: d.Add(15*time.Hour + time.Duration(i)*time.Second)})
	}
	for i := 0; i < len(views); i += tidings.MaxPageViewsPerCall {
		addViews(t, db, acme.ID, views[i:min(i+tidings.MaxPageViewsPerCall, len(views))]...)
	}
	// bob: an event an hour before his one view (the event is activity too).
	if _, err := db.PublishEvent(ctx, acme.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "Paid", UserID: "bob",
		Parser: tidings.ParserText, Timestamp: d.Add(24*time.Hour + 9*time.Hour)}); err != nil {
		t.Fatal(err)
	}
	addViews(t, db, acme.ID, tidings.PageView{UserID: "bob", Path: "/", Timestamp: d.Add(24*time.Hour + 10*time.Hour)})
	addViews(t, db, globex.ID, tidings.PageView{UserID: "ada", Path: "/elsewhere", Timestamp: d.Add(time.Hour)})

	// Newest first, in pages, every view once.
	var all []tidings.PageView
	q := tidings.PageViewQuery{Project: "shop", Limit: 7}
	for {
		page, err := db.ListPageViews(ctx, acme.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Views...)
		if page.Next == "" {
			break
		}
		q.Before = page.Next
	}
	if len(all) != 29 {
		t.Fatalf("listed %d views, want 29", len(all))
	}
	if !slices.IsSortedFunc(all, func(a, b tidings.PageView) int { return b.Timestamp.Compare(a.Timestamp) }) {
		t.Fatal("views not newest first")
	}
	if v := all[0]; v.UserID != "bob" || v.Path != "/" || !v.Entry || v.Referrer != "" {
		t.Fatalf("newest view %+v", v)
	}
	if v := all[1]; v.UserID != "ada" || v.Path != "/pricing" || !v.Entry || v.Referrer != "https://news.example.org/item" {
		t.Fatalf("a view from another site %+v", v)
	}
	if v := all[len(all)-1]; v.Path != "/docs/0?utm_source=x" || v.Title != "Docs" || v.Entry || !v.Timestamp.Equal(d.Add(10*time.Hour)) {
		t.Fatalf("oldest view %+v", v)
	}
	// One user's, in a time range.
	page, err := db.ListPageViews(ctx, acme.ID, tidings.PageViewQuery{Project: "shop", UserID: "ada",
		Since: d.Add(10*time.Hour + 5*time.Minute), Until: d.Add(10*time.Hour + 10*time.Minute), Limit: 100})
	if err != nil || len(page.Views) != 5 || page.Next != "" || !page.Views[0].Timestamp.Equal(d.Add(10*time.Hour+9*time.Minute)) {
		t.Fatalf("ada's views from 10:05 to 10:10: %+v, %v", page, err)
	}
	if page, err := db.ListPageViews(ctx, acme.ID, tidings.PageViewQuery{Project: "shop", UserID: "nobody", Limit: 10}); err != nil || len(page.Views) != 0 {
		t.Fatalf("an unknown user's views: %+v, %v", page, err)
	}
	for _, bad := range []string{"x", "1.", "zz.-1", "01H.", "a.b.c"} {
		_, err := db.ListPageViews(ctx, acme.ID, tidings.PageViewQuery{Project: "shop", Before: bad, Limit: 10})
		if tidings.ErrorCode(err) != tidings.EValidation {
			t.Fatalf("cursor %q: %v, want %s", bad, err, tidings.EValidation)
		}
	}
	if _, err := db.ListPageViews(ctx, acme.ID, tidings.PageViewQuery{Project: "nope", Limit: 10}); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	c := &tidings.NewPageViews{Project: "nope", Views: []tidings.PageView{{UserID: "u", Path: "/", Timestamp: d}}}
	if err := db.AddPageViews(ctx, acme.ID, c); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("views of an unknown project: %v", err)
	}

	// The users: counts, first and last seen, sessions.
	ada, err := db.FindPerson(ctx, acme.ID, "shop", "ada")
	if err != nil {
		t.Fatal(err)
	}
	if ada.PageViews != 28 || ada.Events != 0 || ada.Sessions != 2 || !ada.FirstSeen.Equal(d.Add(10*time.Hour)) ||
		!ada.LastSeen.Equal(d.Add(15*time.Hour+2*time.Second)) {
		t.Fatalf("ada: %+v", ada)
	}
	bob, err := db.FindPerson(ctx, acme.ID, "shop", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if bob.PageViews != 1 || bob.Events != 1 || bob.Sessions != 2 {
		t.Fatalf("bob: %+v", bob)
	}
	other, err := db.FindPerson(ctx, globex.ID, "shop", "ada")
	if err != nil || other.PageViews != 1 {
		t.Fatalf("globex's ada: %+v, %v", other, err)
	}

	// Activity: ada's two sessions in one day, her top pages (ties by path).
	act, err := db.UserActivity(ctx, acme.ID, "shop", "ada", d.AddDate(0, 0, -80))
	if err != nil {
		t.Fatal(err)
	}
	wantTop := []tidings.PageCount{{Value: "/docs/0?utm_source=x", Views: 9}, {Value: "/docs/1?utm_source=x", Views: 8},
		{Value: "/docs/2?utm_source=x", Views: 8}, {Value: "/pricing", Views: 3}}
	if act.Sessions != 2 || len(act.Days) != 1 || act.Days[0] != (tidings.ActivityDay{Day: d, Views: 28}) || !slices.Equal(act.TopPages, wantTop) {
		t.Fatalf("ada's activity: %+v", act)
	}
	act, err = db.UserActivity(ctx, acme.ID, "shop", "bob", d.Add(24*time.Hour))
	if err != nil || act.Sessions != 2 || len(act.Days) != 1 || act.Days[0] != (tidings.ActivityDay{Day: d.Add(24 * time.Hour), Events: 1, Views: 1}) {
		t.Fatalf("bob's activity: %+v, %v", act, err)
	}
	if act, err := db.UserActivity(ctx, acme.ID, "shop", "bob", d.Add(50*time.Hour)); err != nil || len(act.Days) != 0 || act.Sessions != 2 {
		t.Fatalf("bob's activity since after it: %+v, %v", act, err)
	}
	if _, err := db.UserActivity(ctx, acme.ID, "shop", "nobody", d); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("an unknown user's activity: %v", err)
	}
	mustCheck(t, db, "after the views")
}

func TestPageStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, globex := pagesStore(t)
	d := day0()
	// Day 1: 12 paths viewed 12, 11, …, 1 times by u-0 … (path i by i+1 users: ties by
	// path), entries from search.example and mail.example; day 3: 2 views of one user.
	var views []tidings.PageView
	for i := range 12 {
		for u := range 12 - i {
			ref := ""
			switch {
			case u%3 == 1:
				ref = "https://www.search.example/q"
			case u%3 == 2:
				ref = "https://shop.example/from-inside"
			}
			views = append(views, tidings.PageView{UserID: fmt.Sprintf("u-%d", u), Path: fmt.Sprintf("/p%02d", i), Referrer: ref,
				Timestamp: d.Add(24*time.Hour + time.Duration(i*12+u)*time.Minute)})
		}
	}
	views = append(views, tidings.PageView{UserID: "u-0", Path: "/p00", Referrer: "http://mail.example/inbox", Timestamp: d.Add(72 * time.Hour)},
		tidings.PageView{UserID: "u-0", Path: "/p05", Referrer: "/p00", Timestamp: d.Add(72*time.Hour + time.Minute)})
	for i := 0; i < len(views); i += tidings.MaxPageViewsPerCall {
		addViews(t, db, acme.ID, views[i:min(i+tidings.MaxPageViewsPerCall, len(views))]...)
	}
	addViews(t, db, globex.ID, tidings.PageView{UserID: "x", Path: "/p11", Timestamp: d.Add(24 * time.Hour)})

	st, err := db.PageStats(ctx, acme.ID, tidings.PageStatsQuery{Project: "shop", From: d, To: d.AddDate(0, 0, 5)})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Days) != 5 {
		t.Fatalf("%d days, want 5: %+v", len(st.Days), st.Days)
	}
	for i, want := range []tidings.PageDay{{Day: d}, {Day: d.Add(24 * time.Hour), Views: 78, Users: 12}, {Day: d.Add(48 * time.Hour)},
		{Day: d.Add(72 * time.Hour), Views: 2, Users: 1}, {Day: d.Add(96 * time.Hour)}} {
		if st.Days[i] != want {
			t.Fatalf("day %d: %+v, want %+v", i, st.Days[i], want)
		}
	}
	// Entries: u%3 == 0 (no referrer) and 1 (another site) of each path, and day 3's first.
	entries := int64(1)
	for i := range 12 {
		for u := range 12 - i {
			if u%3 != 2 {
				entries++
			}
		}
	}
	if st.Views != 80 || st.Entries != entries {
		t.Fatalf("views %d entries %d, want 80 and %d", st.Views, st.Entries, entries)
	}
	if len(st.TopPages) != tidings.TopPagesShown || st.TopPages[0] != (tidings.PageCount{Value: "/p00", Views: 13}) ||
		st.TopPages[1] != (tidings.PageCount{Value: "/p01", Views: 11}) || st.TopPages[9] != (tidings.PageCount{Value: "/p09", Views: 3}) {
		t.Fatalf("top pages %+v", st.TopPages)
	}
	if st.TopEntries[0] != (tidings.PageCount{Value: "/p00", Views: 9}) || len(st.TopEntries) != tidings.TopPagesShown {
		t.Fatalf("top entries %+v", st.TopEntries)
	}
	wantRefs := []tidings.PageCount{{Value: "search.example", Views: 26}, {Value: "mail.example", Views: 1}}
	if !slices.Equal(st.TopReferrers, wantRefs) {
		t.Fatalf("top referrers %+v, want %+v", st.TopReferrers, wantRefs)
	}
	// A range of 150 days around them: the whole months' counts come from their months'
	// rows, the same.
	long, err := db.PageStats(ctx, acme.ID, tidings.PageStatsQuery{Project: "shop", From: d.AddDate(0, 0, -90), To: d.AddDate(0, 0, 60)})
	if err != nil || len(long.Days) != 150 || long.Views != st.Views || long.Entries != st.Entries || !slices.Equal(long.TopPages, st.TopPages) ||
		!slices.Equal(long.TopEntries, st.TopEntries) || !slices.Equal(long.TopReferrers, st.TopReferrers) {
		t.Fatalf("150 days: %+v, %v\nwant the 5 days' %+v", long, err, st)
	}
	// A range of day 3 only; and the bad ranges.
	st, err = db.PageStats(ctx, acme.ID, tidings.PageStatsQuery{Project: "shop", From: d.Add(72 * time.Hour), To: d.Add(96 * time.Hour)})
	if err != nil || len(st.Days) != 1 || st.Views != 2 || !slices.Equal(st.TopPages, []tidings.PageCount{{Value: "/p00", Views: 1}, {Value: "/p05", Views: 1}}) {
		t.Fatalf("day 3: %+v, %v", st, err)
	}
	for _, r := range [][2]time.Time{{d, d}, {d.Add(24 * time.Hour), d}, {d.AddDate(-2, 0, 0), d}} {
		if _, err := db.PageStats(ctx, acme.ID, tidings.PageStatsQuery{Project: "shop", From: r[0], To: r[1]}); tidings.ErrorCode(err) != tidings.EValidation {
			t.Fatalf("range %v: %v", r, err)
		}
	}
	if _, err := db.PageStats(ctx, acme.ID, tidings.PageStatsQuery{Project: "nope", From: d, To: d.Add(24 * time.Hour)}); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	mustCheck(t, db, "after the views")
}

func TestPeopleSortAndGPC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := pagesStore(t)
	d := day0()
	// u-i: first seen on day i (a view), i events, last seen on day 9-i (another view).
	for i := range 5 {
		u := fmt.Sprintf("u-%d", i)
		addViews(t, db, acme.ID, tidings.PageView{UserID: u, Path: "/", Timestamp: d.AddDate(0, 0, i)},
			tidings.PageView{UserID: u, Path: "/", Timestamp: d.AddDate(0, 0, 9-i)})
		for range i {
			if _, err := db.PublishEvent(ctx, acme.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "e", UserID: u,
				Parser: tidings.ParserText, Timestamp: d.AddDate(0, 0, 5)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Events move last seen to their arrival (now): u-0 (none) was seen last on day 9,
	// the others in the order of their events.
	for _, c := range []struct {
		sort string
		want []string
	}{
		{tidings.PersonSortEvents, []string{"u-4", "u-3", "u-2", "u-1", "u-0"}},
		{tidings.PersonSortFirstSeen, []string{"u-4", "u-3", "u-2", "u-1", "u-0"}},
		{"", []string{"u-4", "u-3", "u-2", "u-1", "u-0"}},
	} {
		var got []string
		q := tidings.PersonQuery{Project: "shop", Sort: c.sort, Limit: 2}
		for {
			page, err := db.ListPeople(ctx, acme.ID, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range page.People {
				got = append(got, u.UserID)
				if u.PageViews != 2 {
					t.Fatalf("%s has %d page views, want 2", u.UserID, u.PageViews)
				}
			}
			if page.Next == "" {
				break
			}
			q.Before = page.Next
		}
		if !slices.Equal(got, c.want) {
			t.Fatalf("sort %q: %v, want %v", c.sort, got, c.want)
		}
	}
	if _, err := db.ListPeople(ctx, acme.ID, tidings.PersonQuery{Project: "shop", Sort: "name", Limit: 2}); tidings.ErrorCode(err) != tidings.EValidation {
		t.Fatalf("an unknown sort: %v", err)
	}

	p, err := db.FindProject(ctx, acme.ID, "shop")
	if err != nil || p.IgnoreGPC {
		t.Fatalf("a new project ignores GPC: %+v, %v", p, err)
	}
	if err := db.SetIgnoreGPC(ctx, acme.ID, "shop", true); err != nil {
		t.Fatal(err)
	}
	if p, err := db.FindProject(ctx, acme.ID, "shop"); err != nil || !p.IgnoreGPC {
		t.Fatalf("after SetIgnoreGPC(true): %+v, %v", p, err)
	}
	if ps, err := db.ListProjects(ctx, acme.ID); err != nil || !ps[0].IgnoreGPC {
		t.Fatalf("ListProjects after SetIgnoreGPC(true): %+v, %v", ps, err)
	}
	if err := db.SetIgnoreGPC(ctx, acme.ID, "nope", true); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("SetIgnoreGPC of an unknown project: %v", err)
	}
	mustCheck(t, db, "after the views")
}

// TestPageViewsDeletions: deleting an event takes it off its user's minutes (a minute
// left empty goes, and with it a session), deleting a channel takes its events off, the
// purge takes expired views off every count, and deleting the project leaves no row of
// its views behind.
func TestPageViewsDeletions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := pagesStore(t)
	d := day0()
	if _, err := db.CreateChannel(ctx, acme.ID, "shop", "signups"); err != nil {
		t.Fatal(err)
	}
	publish := func(channel string, at time.Time) *tidings.Event {
		t.Helper()
		ev, err := db.PublishEvent(ctx, acme.ID, &tidings.NewEvent{Project: "shop", Channel: channel, Event: "e", UserID: "ada",
			Parser: tidings.ParserText, Timestamp: at})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	sessions := func(step string, want int64) {
		t.Helper()
		u, err := db.FindPerson(ctx, acme.ID, "shop", "ada")
		if err != nil {
			t.Fatal(err)
		}
		if u.Sessions != want {
			t.Fatalf("%s: %d sessions, want %d", step, u.Sessions, want)
		}
		mustCheck(t, db, step)
	}
	// Views at 10:00 and 12:00; events at 11:00 (two in one minute), 13:00 and 14:00.
	addViews(t, db, acme.ID, tidings.PageView{UserID: "ada", Path: "/a", Timestamp: d.Add(10 * time.Hour)},
		tidings.PageView{UserID: "ada", Path: "/b", Referrer: "https://ref.example/", Timestamp: d.Add(12 * time.Hour)})
	e11 := publish("orders", d.Add(11*time.Hour))
	e11b := publish("orders", d.Add(11*time.Hour+30*time.Second))
	publish("signups", d.Add(13*time.Hour))
	publish("signups", d.Add(14*time.Hour))
	sessions("views and events", 5)
	if err := db.DeleteEvent(ctx, acme.ID, "shop", e11.ID); err != nil {
		t.Fatal(err)
	}
	sessions("one of a minute's two events deleted", 5)
	if err := db.DeleteEvent(ctx, acme.ID, "shop", e11b.ID); err != nil {
		t.Fatal(err)
	}
	sessions("the minute's other event deleted", 4)
	if err := db.DeleteChannel(ctx, acme.ID, "shop", "signups"); err != nil {
		t.Fatal(err)
	}
	sessions("a channel of the user's events deleted", 2)

	// The retention purge, in batches of one: the views are 10 days old.
	if err := db.SetRetention(ctx, acme.ID, "shop", 7); err != nil {
		t.Fatal(err)
	}
	total := 0
	for {
		n, err := db.PurgeExpired(ctx, time.Now(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if n > 1 {
			t.Fatalf("purged %d, more than 1", n)
		}
		if n == 0 {
			break
		}
		total += n
		mustCheck(t, db, fmt.Sprintf("after %d purged", total))
	}
	if total != 2 {
		t.Fatalf("purged %d views, want 2", total)
	}
	u, err := db.FindPerson(ctx, acme.ID, "shop", "ada")
	if err != nil || u.PageViews != 0 || u.Sessions != 0 {
		t.Fatalf("ada after the purge: %+v, %v", u, err)
	}
	st, err := db.PageStats(ctx, acme.ID, tidings.PageStatsQuery{Project: "shop", From: d, To: d.Add(24 * time.Hour)})
	if err != nil || st.Views != 0 || st.Days[0].Users != 0 || len(st.TopPages)+len(st.TopEntries)+len(st.TopReferrers) != 0 {
		t.Fatalf("the Pages view after the purge: %+v, %v", st, err)
	}

	addViews(t, db, acme.ID, tidings.PageView{UserID: "bob", Path: "/c", Referrer: "https://ref.example/"})
	if err := db.DeleteProject(ctx, acme.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := postgres.QueryRowForTest(db, `SELECT (SELECT count(*) FROM page_views) + (SELECT count(*) FROM page_texts)
		+ (SELECT count(*) FROM user_minutes) + (SELECT count(*) FROM page_person_paths) + (SELECT count(*) FROM page_user_days)
		+ (SELECT count(*) FROM page_days) + (SELECT count(*) FROM page_path_days) + (SELECT count(*) FROM page_referrer_days)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d rows of the deleted project's views left", left)
	}
	mustCheck(t, db, "after the project's deletion")
}

// TestPageViewsMigration: migration 00017 counts the events of a store that has
// them into its users' minutes and sessions (undone by its Down and run again here).
func TestPageViewsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateChannel(ctx, a.ID, "shop", "orders")
	d := day0()
	// ada: three sessions (10:00 twice in a minute, 10:20, 11:00; 13:00), bob: one.
	for _, e := range []struct {
		user string
		at   time.Duration
	}{{"ada", 10 * time.Hour}, {"ada", 10*time.Hour + 10*time.Second}, {"ada", 10*time.Hour + 20*time.Minute},
		{"ada", 11 * time.Hour}, {"ada", 13 * time.Hour}, {"bob", 9 * time.Hour}} {
		if _, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "e", UserID: e.user,
			Parser: tidings.ParserText, Timestamp: d.Add(e.at)}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	undoMigrationsFrom(t, url, 17)
	if db, err = postgres.Open(ctx, url, postgres.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for user, want := range map[string]int64{"ada": 3, "bob": 1} {
		u, err := db.FindPerson(ctx, a.ID, "shop", user)
		if err != nil || u.Sessions != want || u.PageViews != 0 || u.Events == 0 {
			t.Fatalf("%s after the migration: %+v, %v (want %d sessions)", user, u, err, want)
		}
	}
	act, err := db.UserActivity(ctx, a.ID, "shop", "ada", d)
	if err != nil || len(act.Days) != 1 || act.Days[0].Events != 5 {
		t.Fatalf("ada's activity after the migration: %+v, %v", act, err)
	}
	mustCheck(t, db, "after the migration")
}

// undoMigrations runs the Down of each migration file, in order, and forgets it: the
// next Open runs them again.
// undoMigrationsFrom undoes every migration from version from on, newest first.
func undoMigrationsFrom(t *testing.T, url string, from int) {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		version, _, _ := strings.Cut(e.Name(), "_")
		if n, err := strconv.Atoi(version); err == nil && n >= from {
			files = append(files, e.Name())
		}
	}
	slices.Sort(files)
	slices.Reverse(files)
	undoMigrations(t, url, files...)
}

// undoMigrations runs the Down part of each migration, in the order given.
func undoMigrations(t *testing.T, url string, files ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, f := range files {
		sql, err := os.ReadFile("migrations/" + f)
		if err != nil {
			t.Fatal(err)
		}
		_, down, ok := strings.Cut(string(sql), "-- +goose Down")
		if !ok {
			t.Fatalf("no Down in migration %s", f)
		}
		version, _, _ := strings.Cut(f, "_")
		if _, err := conn.Exec(ctx, down+`; DELETE FROM goose_db_version WHERE version_id = `+strings.TrimLeft(version, "0")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPagePathMonthsMigration: migration 00018 counts a store's paths per month from
// their days; the check (page_path_month among the others) finds the store whole and
// the Pages view of its whole months and edge days answers as before.
func TestPagePathMonthsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	db.CreateProject(ctx, a.ID, "shop")
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -130)
	for b := 0; b < 400; b += tidings.MaxPageViewsPerCall {
		var views []tidings.PageView
		for i := b; i < b+tidings.MaxPageViewsPerCall; i++ {
			v := tidings.PageView{UserID: fmt.Sprint("u-", i%7), Path: fmt.Sprint("/p", i%13), Timestamp: start.Add(time.Duration(i*i%2900) * time.Hour)}
			if i%3 == 0 {
				v.Referrer = "/p0"
			}
			views = append(views, v)
		}
		addViews(t, db, a.ID, views...)
	}
	q := tidings.PageStatsQuery{Project: "shop", From: start.AddDate(0, 0, 3), To: start.AddDate(0, 0, 115)}
	before, err := db.PageStats(ctx, a.ID, q)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	undoMigrationsFrom(t, url, 18)
	if db, err = postgres.Open(ctx, url, postgres.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mustCheck(t, db, "after the migration")
	after, err := db.PageStats(ctx, a.ID, q)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) || len(after.TopPages) != 10 {
		t.Fatalf("the Pages view after the migration:\n%+v\nbefore:\n%+v", after, before)
	}
}
