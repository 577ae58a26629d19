package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// pageBase is a UTC midnight in the past: page views may not be later than a day ahead.
var pageBase = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// view is a page view of user at base + offset.
func view(user, path string, at time.Duration) tidings.PageView {
	return tidings.PageView{UserID: user, Path: path, Timestamp: pageBase.Add(at)}
}

// addViews checks c as POST /v1/page would (cleaning, Entry) and stores it.
func addViews(t *testing.T, s tidings.Store, accountID int64, c *tidings.NewPageViews) {
	t.Helper()
	var p tidings.Problems
	c.Check(&p, time.Now(), true)
	must(t, p.Err())
	must(t, s.AddPageViews(context.Background(), accountID, c))
}

// checkClean runs the store's own check and fails on anything it names.
func checkClean(t *testing.T, s tidings.Store) {
	t.Helper()
	r, err := s.Check(context.Background())
	must(t, err)
	if !r.OK() {
		t.Fatalf("check: %v (+%d omitted)", r.Problems, r.Omitted)
	}
}

func viewPaths(vs []tidings.PageView) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.UserID + " " + v.Path
	}
	return out
}

// testPageViews: views are stored cleaned and listed newest first, by user and time
// range, in pages whose cursor the store gave; a view creates its user and moves its
// first and last seen; the project's GPC setting; nothing of one account reaches
// another.
func testPageViews(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	_, err := f.s.CreateProject(ctx, f.account.ID, "site")
	must(t, err)

	// Before any view: the list is empty, and GPC is honoured by default.
	pg, err := f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", Limit: 10})
	must(t, err)
	if len(pg.Views) != 0 || pg.Next != "" {
		t.Fatalf("an empty project's views: %+v", pg)
	}
	p, err := f.s.FindProject(ctx, f.account.ID, "site")
	must(t, err)
	if p.IgnoreGPC {
		t.Fatal("a new project ignores GPC")
	}
	must(t, f.s.SetIgnoreGPC(ctx, f.account.ID, "site", true))
	p, err = f.s.FindProject(ctx, f.account.ID, "site")
	must(t, err)
	if !p.IgnoreGPC {
		t.Fatal("SetIgnoreGPC(true) is not kept")
	}
	ps, err := f.s.ListProjects(ctx, f.account.ID)
	must(t, err)
	for _, p := range ps {
		if p.IgnoreGPC != (p.Name == "site") {
			t.Fatalf("ListProjects: %s ignores GPC: %v", p.Name, p.IgnoreGPC)
		}
	}
	must(t, f.s.SetIgnoreGPC(ctx, f.account.ID, "site", false))
	if p, _ := f.s.FindProject(ctx, f.account.ID, "site"); p.IgnoreGPC {
		t.Fatal("SetIgnoreGPC(false) is not kept")
	}
	wantCode(t, f.s.SetIgnoreGPC(ctx, f.account.ID, "nope", true), tidings.EProjectNotFound)
	wantCode(t, f.s.SetIgnoreGPC(ctx, other.ID, "site", true), tidings.EProjectNotFound)

	// 30 views of three users, a minute apart, in batches of 10; the first carries a
	// query string, a title and a referrer.
	for b := range 3 {
		c := &tidings.NewPageViews{Project: "site", Host: "shop.example"}
		for i := b * 10; i < b*10+10; i++ {
			v := view(fmt.Sprint("u-", i%3), fmt.Sprintf("/p/%d", i), time.Duration(i)*time.Minute)
			if i == 0 {
				v.Path, v.Title, v.Referrer = "/p/0?email=a@b.c&utm_source=news", "Home", "https://www.google.com/search?q=secret"
			}
			c.Views = append(c.Views, v)
		}
		addViews(t, f.s, f.account.ID, c)
	}
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", Limit: 100})
	must(t, err)
	if len(pg.Views) != 30 || pg.Next != "" {
		t.Fatalf("30 views listed as %d, next %q", len(pg.Views), pg.Next)
	}
	for i, v := range pg.Views {
		n := 29 - i
		if !v.Timestamp.Equal(pageBase.Add(time.Duration(n)*time.Minute)) || v.UserID != fmt.Sprint("u-", n%3) {
			t.Fatalf("view %d: %+v, want the view of minute %d, newest first", i, v, n)
		}
	}
	first := pg.Views[29]
	if first.UserID != "u-0" || first.Path != "/p/0?utm_source=news" || first.Title != "Home" ||
		first.Referrer != "https://www.google.com/search" || !first.Timestamp.Equal(pageBase) || !first.Entry {
		t.Fatalf("stored view: %+v", first)
	}
	if pg.Views[28].Title != "" || pg.Views[28].Referrer != "" || !pg.Views[28].Entry {
		t.Fatalf("a view without title or referrer: %+v", pg.Views[28])
	}

	// Pages by their cursor, without a view twice or left out.
	var walked []string
	q := tidings.PageViewQuery{Project: "site", Limit: 7}
	for round := 0; ; round++ {
		pg, err := f.s.ListPageViews(ctx, f.account.ID, q)
		must(t, err)
		if len(pg.Views) > 7 {
			t.Fatalf("a page of 7 holds %d", len(pg.Views))
		}
		walked = append(walked, viewPaths(pg.Views)...)
		if pg.Next == "" {
			break
		}
		if round > 10 {
			t.Fatal("pages do not end")
		}
		q.Before = pg.Next
	}
	all, _ := f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", Limit: 100})
	if !slices.Equal(walked, viewPaths(all.Views)) {
		t.Fatalf("paged: %v\nwhole: %v", walked, viewPaths(all.Views))
	}
	// Views of the same millisecond are not lost between pages.
	same := &tidings.NewPageViews{Project: "site"}
	for i := range 5 {
		same.Views = append(same.Views, view("u-same", fmt.Sprintf("/same/%d", i), 40*time.Minute))
	}
	addViews(t, f.s, f.account.ID, same)
	var sameSeen []string
	q = tidings.PageViewQuery{Project: "site", UserID: "u-same", Limit: 2}
	for {
		pg, err := f.s.ListPageViews(ctx, f.account.ID, q)
		must(t, err)
		sameSeen = append(sameSeen, viewPaths(pg.Views)...)
		if pg.Next == "" {
			break
		}
		q.Before = pg.Next
	}
	slices.Sort(sameSeen)
	if len(slices.Compact(sameSeen)) != 5 {
		t.Fatalf("5 views of one millisecond, paged by 2: %v", sameSeen)
	}

	// A user's views; a time range [Since, Until).
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", UserID: "u-1", Limit: 100})
	must(t, err)
	if len(pg.Views) != 10 || pg.Views[0].Path != "/p/28" || pg.Views[9].Path != "/p/1" {
		t.Fatalf("u-1's views: %v", viewPaths(pg.Views))
	}
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", Limit: 100,
		Since: pageBase.Add(10 * time.Minute), Until: pageBase.Add(20 * time.Minute)})
	must(t, err)
	if len(pg.Views) != 10 || pg.Views[0].Path != "/p/19" || pg.Views[9].Path != "/p/10" {
		t.Fatalf("views of minutes [10, 20): %v", viewPaths(pg.Views))
	}
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", UserID: "u-2", Limit: 100,
		Since: pageBase.Add(10 * time.Minute), Until: pageBase.Add(20 * time.Minute)})
	must(t, err)
	if got := viewPaths(pg.Views); !slices.Equal(got, []string{"u-2 /p/17", "u-2 /p/14", "u-2 /p/11"}) {
		t.Fatalf("u-2's views of minutes [10, 20): %v", got)
	}
	// An unknown user has no views; a cursor the store did not give is refused.
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", UserID: "nobody", Limit: 10})
	must(t, err)
	if len(pg.Views) != 0 || pg.Next != "" {
		t.Fatalf("an unknown user's views: %+v", pg)
	}
	for _, bad := range []string{"garbage", "-1", "∞", "9999999999999999999999999"} {
		_, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "site", Before: bad, Limit: 10})
		wantCode(t, err, tidings.EValidation)
	}
	_, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "nope", Limit: 10})
	wantCode(t, err, tidings.EProjectNotFound)

	// Users: created by a view, first and last seen from the views' times (min, max),
	// page views counted.
	u, err := f.s.FindPerson(ctx, f.account.ID, "site", "u-0")
	must(t, err)
	if u.PageViews != 10 || u.Events != 0 || !u.FirstSeen.Equal(pageBase) || !u.LastSeen.Equal(pageBase.Add(27*time.Minute)) {
		t.Fatalf("u-0 after its views: %+v", u)
	}
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "site", Views: []tidings.PageView{
		view("u-0", "/late", 3*time.Hour), view("u-0", "/early", -2*time.Hour)}})
	u, err = f.s.FindPerson(ctx, f.account.ID, "site", "u-0")
	must(t, err)
	if u.PageViews != 12 || !u.FirstSeen.Equal(pageBase.Add(-2*time.Hour)) || !u.LastSeen.Equal(pageBase.Add(3*time.Hour)) {
		t.Fatalf("u-0 after an earlier and a later view: %+v", u)
	}
	people, err := f.s.ListPeople(ctx, f.account.ID, tidings.PersonQuery{Project: "site", Limit: 10})
	must(t, err)
	counts := map[string]int64{}
	for _, u := range people.People {
		counts[u.UserID] = u.PageViews
	}
	if fmt.Sprint(counts) != "map[u-0:12 u-1:10 u-2:10 u-same:5]" {
		t.Fatalf("users' page views in the list: %v", counts)
	}

	// Another account: its project of the same name is its own; it cannot read,
	// write or set this one's.
	_, err = f.s.ListPageViews(ctx, other.ID, tidings.PageViewQuery{Project: "site", Limit: 10})
	wantCode(t, err, tidings.EProjectNotFound)
	c := &tidings.NewPageViews{Project: "site", Views: []tidings.PageView{view("intruder", "/x", 0)}}
	var pr tidings.Problems
	c.Check(&pr, time.Now(), false)
	wantCode(t, f.s.AddPageViews(ctx, other.ID, c), tidings.EProjectNotFound)
	_, err = f.s.PageStats(ctx, other.ID, tidings.PageStatsQuery{Project: "site", From: pageBase, To: pageBase.AddDate(0, 0, 1)})
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.UserActivity(ctx, other.ID, "site", "u-0", pageBase)
	wantCode(t, err, tidings.EProjectNotFound)
	addViews(t, f.s, other.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{view("u-0", "/theirs", 0)}})
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	if len(pg.Views) != 0 {
		t.Fatalf("another account's view reached this one: %+v", pg.Views)
	}
	if _, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "u-0"); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("another account's user reached this one: %v", err)
	}
	pg, err = f.s.ListPageViews(ctx, other.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	if len(pg.Views) != 1 || pg.Views[0].Path != "/theirs" {
		t.Fatalf("the other account's views: %+v", pg.Views)
	}
	checkClean(t, f.s)
}

// testPageViewCaps: a page answers at most MaxPageViewsRead views, whatever the limit.
func testPageViewCaps(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	n := tidings.MaxPageViewsRead + 30
	for b := 0; b < n; b += tidings.MaxPageViewsPerCall {
		c := &tidings.NewPageViews{Project: "my-saas"}
		for i := b; i < min(b+tidings.MaxPageViewsPerCall, n); i++ {
			c.Views = append(c.Views, view(fmt.Sprint("u-", i%50), fmt.Sprint("/", i%200), time.Duration(i)*time.Second))
		}
		addViews(t, f.s, f.account.ID, c)
	}
	pg, err := f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 1 << 30})
	must(t, err)
	if len(pg.Views) != tidings.MaxPageViewsRead || pg.Next == "" {
		t.Fatalf("a limit of 2^30 answered %d views (next %q), want %d and a cursor", len(pg.Views), pg.Next, tidings.MaxPageViewsRead)
	}
	rest, err := f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 1 << 30, Before: pg.Next})
	must(t, err)
	if len(rest.Views) != 30 || rest.Next != "" {
		t.Fatalf("the rest: %d views, next %q", len(rest.Views), rest.Next)
	}
	_, err = f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: pageBase, To: pageBase.AddDate(0, 0, tidings.MaxPageStatsDays+1)})
	wantCode(t, err, tidings.EValidation)
	_, err = f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: pageBase, To: pageBase})
	wantCode(t, err, tidings.EValidation)
	st, err := f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: pageBase, To: pageBase.AddDate(0, 0, tidings.MaxPageStatsDays)})
	must(t, err)
	if len(st.Days) != tidings.MaxPageStatsDays || st.Views != int64(n) || len(st.TopPages) != tidings.TopPagesShown {
		t.Fatalf("the longest range: %d days, %d views, %d top pages", len(st.Days), st.Views, len(st.TopPages))
	}
	a, err := f.s.UserActivity(ctx, f.account.ID, "my-saas", "u-1", pageBase)
	must(t, err)
	if len(a.TopPages) > tidings.TopPagesShown {
		t.Fatalf("%d top pages", len(a.TopPages))
	}
	checkClean(t, f.s)
}

// testSessions: a user's activity (events with its user_id and page views) counted per
// minute makes sessions: a gap of 30 whole minutes continues one, 31 starts another;
// deleting the event that bridged a gap splits a session.
func testSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	sessions := func(user string) int64 {
		t.Helper()
		u, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", user)
		must(t, err)
		a, err := f.s.UserActivity(ctx, f.account.ID, "my-saas", user, pageBase.AddDate(0, 0, -30))
		must(t, err)
		if a.Sessions != u.Sessions {
			t.Fatalf("%s: %d sessions by FindPerson, %d by UserActivity", user, u.Sessions, a.Sessions)
		}
		return u.Sessions
	}
	// Minutes 0 (view), 30 (event: a gap of 30), 61 (view: 31), 61:59 (same minute),
	// 92 (event, 31 after 61): three sessions.
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{
		view("ada", "/a", 0), view("ada", "/b", 61*time.Minute), view("ada", "/c", 61*time.Minute+59*time.Second)}})
	f.publish(t, tidings.NewEvent{Event: "paid", UserID: "ada", Timestamp: pageBase.Add(30*time.Minute + 59*time.Second)})
	f.publish(t, tidings.NewEvent{Event: "paid again", UserID: "ada", Timestamp: pageBase.Add(92 * time.Minute)})
	if n := sessions("ada"); n != 3 {
		t.Fatalf("ada's sessions: %d, want 3", n)
	}
	// Minutes 122 (view), 152 (event) and 182 (view), 30 apart: the same session,
	// until the event bridging 122 and 182 is deleted.
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{view("ada", "/d", 122*time.Minute)}})
	bridge := f.publish(t, tidings.NewEvent{Event: "bridge", UserID: "ada", Timestamp: pageBase.Add(152 * time.Minute)})
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{view("ada", "/e", 182*time.Minute)}})
	if n := sessions("ada"); n != 3 {
		t.Fatalf("ada's sessions after activity 30 minutes apart: %d, want 3", n)
	}
	must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", bridge.ID))
	if n := sessions("ada"); n != 4 {
		t.Fatalf("ada's sessions once the event bridging minutes 122 and 182 is gone: %d, want 4", n)
	}
	// Activity arriving late, between and before the minutes known: a view where the
	// bridge was joins two sessions again; one 20 minutes before the first joins the
	// first; one 100 minutes before starts a session of its own.
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{view("ada", "/late", 152*time.Minute)}})
	if n := sessions("ada"); n != 3 {
		t.Fatalf("ada's sessions after a late view bridging minutes 122 and 182: %d, want 3", n)
	}
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{
		view("ada", "/earlier", -20*time.Minute), view("ada", "/earliest", -100*time.Minute)}})
	if n := sessions("ada"); n != 4 {
		t.Fatalf("ada's sessions after views 20 and 100 minutes before the first: %d, want 4", n)
	}
	u, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "ada")
	must(t, err)
	if u.Events != 2 || u.PageViews != 8 {
		t.Fatalf("ada: %d events, %d views", u.Events, u.PageViews)
	}
	// A user seen by events only has sessions too; deleting a channel takes its
	// events' minutes along.
	_, err = f.s.CreateChannel(ctx, f.account.ID, "my-saas", "signups")
	must(t, err)
	f.publish(t, tidings.NewEvent{Event: "a", UserID: "bob", Timestamp: pageBase})
	f.publish(t, tidings.NewEvent{Channel: "signups", Event: "b", UserID: "bob", Timestamp: pageBase.Add(20 * time.Minute)})
	f.publish(t, tidings.NewEvent{Event: "c", UserID: "bob", Timestamp: pageBase.Add(40 * time.Minute)})
	if n := sessions("bob"); n != 1 {
		t.Fatalf("bob's sessions: %d, want 1", n)
	}
	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "signups"))
	if n := sessions("bob"); n != 2 {
		t.Fatalf("bob's sessions once the channel of the bridging event is gone: %d, want 2", n)
	}
	// A list carries no sessions; an unknown user has no activity.
	people, err := f.s.ListPeople(ctx, f.account.ID, tidings.PersonQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	for _, u := range people.People {
		if u.Sessions != 0 {
			t.Fatalf("a list's user with sessions: %+v", u)
		}
	}
	_, err = f.s.UserActivity(ctx, f.account.ID, "my-saas", "nobody", pageBase)
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.UserActivity(ctx, f.account.ID, "nope", "ada", pageBase)
	wantCode(t, err, tidings.EProjectNotFound)
	checkClean(t, f.s)
}

// testUserActivity: a profile's activity by day since a time (events and views), and
// the user's most viewed pages, ties by path.
func testUserActivity(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	day := 24 * time.Hour
	c := &tidings.NewPageViews{Project: "my-saas"}
	// Day 0: 3 views; day 2: 2 views; day 5: 1 view. Paths: /a ×3, /b ×2, /c ×1,
	// and one view each of /x… (ties, by path).
	c.Views = []tidings.PageView{view("ada", "/a", 0), view("ada", "/a", time.Hour), view("ada", "/b", 2*time.Hour),
		view("ada", "/a", 2*day), view("ada", "/b", 2*day+time.Minute), view("ada", "/c", 5*day)}
	addViews(t, f.s, f.account.ID, c)
	f.publish(t, tidings.NewEvent{Event: "paid", UserID: "ada", Timestamp: pageBase.Add(2*day + 5*time.Hour)})
	f.publish(t, tidings.NewEvent{Event: "paid", UserID: "ada", Timestamp: pageBase.Add(3 * day)})
	f.publish(t, tidings.NewEvent{Event: "paid", UserID: "someone else", Timestamp: pageBase.Add(3 * day)})
	a, err := f.s.UserActivity(ctx, f.account.ID, "my-saas", "ada", pageBase.Add(day))
	must(t, err)
	wantDays := []tidings.ActivityDay{{Day: pageBase.Add(2 * day), Events: 1, Views: 2}, {Day: pageBase.Add(3 * day), Events: 1},
		{Day: pageBase.Add(5 * day), Views: 1}}
	if len(a.Days) != len(wantDays) {
		t.Fatalf("activity since day 1: %+v, want %+v", a.Days, wantDays)
	}
	for i, d := range a.Days {
		if !d.Day.Equal(wantDays[i].Day) || d.Events != wantDays[i].Events || d.Views != wantDays[i].Views {
			t.Fatalf("activity since day 1: %+v, want %+v", a.Days, wantDays)
		}
	}
	if a.Sessions != 7 { // day 0: three views an hour apart
		t.Fatalf("sessions: %d, want 7", a.Sessions)
	}
	if got := fmt.Sprint(a.TopPages); got != "[{/a 3} {/b 2} {/c 1}]" {
		t.Fatalf("top pages: %s", got)
	}
	more := &tidings.NewPageViews{Project: "my-saas"}
	for i := range 12 {
		more.Views = append(more.Views, view("ada", fmt.Sprintf("/x%02d", 11-i), 6*day))
	}
	addViews(t, f.s, f.account.ID, more)
	a, err = f.s.UserActivity(ctx, f.account.ID, "my-saas", "ada", pageBase)
	must(t, err)
	want := "[{/a 3} {/b 2} {/c 1} {/x00 1} {/x01 1} {/x02 1} {/x03 1} {/x04 1} {/x05 1} {/x06 1}]"
	if got := fmt.Sprint(a.TopPages); got != want {
		t.Fatalf("top pages: %s, want %s", got, want)
	}
	if len(a.Days) != 5 || a.Days[0].Views != 3 || !a.Days[0].Day.Equal(pageBase) {
		t.Fatalf("activity since day 0: %+v", a.Days)
	}
	checkClean(t, f.s)
}

// testPageStats: the Pages view of a range: every day (empty ones too), views and
// distinct users per day, entries, and the top pages, entry pages and referrer hosts.
func testPageStats(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	day := 24 * time.Hour
	ref := func(v tidings.PageView, r string) tidings.PageView { v.Referrer = r; return v }
	// Day 0: ada enters /home from google, goes to /pricing (inside), enters again
	// from no referrer; bob enters /pricing from news.example. Day 2: ada views /home
	// twice (from a path: inside). Day 3 is after the range.
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Host: "www.shop.example", Views: []tidings.PageView{
		ref(view("ada", "/home", time.Hour), "https://www.google.com/search?q=shoes"),
		ref(view("ada", "/pricing", time.Hour+time.Minute), "https://shop.example/home"),
		view("ada", "/home", 5*time.Hour),
		ref(view("bob", "/pricing", 6*time.Hour), "https://news.example/item?id=3"),
	}})
	addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{
		ref(view("ada", "/home", 2*day), "/pricing"),
		ref(view("ada", "/home", 2*day+time.Minute), "/pricing"),
		view("cyd", "/late", 3*day),
	}})
	addViews(t, f.s, other.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{view("eve", "/theirs", time.Hour)}})
	st, err := f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: pageBase.Add(-day), To: pageBase.Add(3 * day)})
	must(t, err)
	wantDays := []tidings.PageDay{{Day: pageBase.Add(-day)}, {Day: pageBase, Views: 4, Users: 2}, {Day: pageBase.Add(day)},
		{Day: pageBase.Add(2 * day), Views: 2, Users: 1}}
	if len(st.Days) != len(wantDays) {
		t.Fatalf("days: %+v, want %+v", st.Days, wantDays)
	}
	for i, d := range st.Days {
		if !d.Day.Equal(wantDays[i].Day) || d.Views != wantDays[i].Views || d.Users != wantDays[i].Users {
			t.Fatalf("days: %+v, want %+v", st.Days, wantDays)
		}
	}
	if st.Views != 6 || st.Entries != 3 {
		t.Fatalf("views %d entries %d, want 6 and 3", st.Views, st.Entries)
	}
	for _, c := range []struct {
		name string
		got  []tidings.PageCount
		want string
	}{
		{"top pages", st.TopPages, "[{/home 4} {/pricing 2}]"},
		{"top entries", st.TopEntries, "[{/home 2} {/pricing 1}]"},
		{"top referrers", st.TopReferrers, "[{google.com 1} {news.example 1}]"},
	} {
		if got := fmt.Sprint(c.got); got != c.want {
			t.Fatalf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// A range without views: every day, all zero, empty lists.
	st, err = f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: pageBase.AddDate(0, 1, 0), To: pageBase.AddDate(0, 1, 7)})
	must(t, err)
	if len(st.Days) != 7 || st.Views != 0 || len(st.TopPages)+len(st.TopEntries)+len(st.TopReferrers) != 0 {
		t.Fatalf("an empty week: %+v", st)
	}
	// Top lists stop at TopPagesShown, ties by value.
	many := &tidings.NewPageViews{Project: "my-saas"}
	for i := range 15 {
		many.Views = append(many.Views, view("dan", fmt.Sprintf("/m%02d", 14-i), 10*day))
	}
	addViews(t, f.s, f.account.ID, many)
	st, err = f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: pageBase.Add(10 * day), To: pageBase.Add(11 * day)})
	must(t, err)
	if len(st.TopPages) != tidings.TopPagesShown || st.TopPages[0].Value != "/m00" || st.TopPages[9].Value != "/m09" || len(st.TopEntries) != 10 {
		t.Fatalf("15 pages of one view each: %v", st.TopPages)
	}
	if len(st.Days) != 1 || st.Days[0].Users != 1 || st.Days[0].Views != 15 {
		t.Fatalf("one day of one user: %+v", st.Days)
	}
	_, err = f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "nope", From: pageBase, To: pageBase.Add(day)})
	wantCode(t, err, tidings.EProjectNotFound)
	checkClean(t, f.s)
}

// testPageRetention: PurgeExpired deletes the views its project no longer keeps, in
// bounded batches counted in its answer, with everything derived from them; deleting
// the project deletes the rest.
func testPageRetention(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	now := time.Now().UTC()
	day := 24 * time.Hour
	today := now.Truncate(day)
	// ada: a view per day for 12 days (the oldest 12 days ago), and an event 10
	// days ago in the minute of a view.
	c := &tidings.NewPageViews{Project: "my-saas", Host: "shop.example"}
	for i := range 12 {
		v := tidings.PageView{UserID: "ada", Path: fmt.Sprint("/d", i%3), Timestamp: today.Add(-time.Duration(i+1) * day).Add(time.Hour),
			Referrer: "https://ref" + fmt.Sprint(i%2) + ".example/"}
		c.Views = append(c.Views, v)
	}
	addViews(t, f.s, f.account.ID, c)
	f.publish(t, tidings.NewEvent{Event: "old", UserID: "ada", Timestamp: today.Add(-10 * day).Add(time.Hour)})
	must(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 7))
	total := 0
	for round := 0; ; round++ {
		n, err := f.s.PurgeExpired(ctx, now, 2)
		must(t, err)
		if n > 2 {
			t.Fatalf("a purge of at most 2 deleted %d", n)
		}
		total += n
		if n == 0 {
			break
		}
		if round > 20 {
			t.Fatal("the purge does not end")
		}
	}
	// Views older than 7 days: those of days 8 to 12 (day 7 at 01:00 is kept only
	// when now is before 01:00; count what the cutoff says).
	cutoff := now.Add(-7 * day)
	expired := 0
	for _, v := range c.Views {
		if v.Timestamp.Before(cutoff) {
			expired++
		}
	}
	if total != expired+1 {
		t.Fatalf("purged %d, want %d views and 1 event", total, expired)
	}
	pg, err := f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 100})
	must(t, err)
	if len(pg.Views) != 12-expired {
		t.Fatalf("%d views kept, want %d", len(pg.Views), 12-expired)
	}
	for _, v := range pg.Views {
		if v.Timestamp.Before(cutoff) {
			t.Fatalf("an expired view kept: %+v", v)
		}
	}
	u, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "ada")
	must(t, err)
	if u.PageViews != int64(12-expired) || u.Events != 0 || u.Sessions != int64(12-expired) {
		t.Fatalf("ada after the purge: %+v", u)
	}
	st, err := f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: today.Add(-14 * day), To: today})
	must(t, err)
	if st.Views != int64(12-expired) || st.Entries != st.Views {
		t.Fatalf("the Pages view after the purge: %d views, %d entries", st.Views, st.Entries)
	}
	for _, d := range st.Days {
		if d.Day.Before(cutoff.Truncate(day)) && (d.Views != 0 || d.Users != 0) {
			t.Fatalf("an expired day counted: %+v", d)
		}
	}
	var refs int64
	for _, r := range st.TopReferrers {
		refs += r.Views
	}
	if refs != st.Entries {
		t.Fatalf("referrers %v after the purge, %d entries", st.TopReferrers, st.Entries)
	}
	a, err := f.s.UserActivity(ctx, f.account.ID, "my-saas", "ada", today.Add(-30*day))
	must(t, err)
	if len(a.Days) != 12-expired {
		t.Fatalf("activity after the purge: %+v", a.Days)
	}
	var top int64
	for _, p := range a.TopPages {
		top += p.Views
	}
	if top != int64(12-expired) {
		t.Fatalf("top pages after the purge: %v", a.TopPages)
	}
	checkClean(t, f.s)

	// The project deleted and made again: nothing of the old one is left.
	must(t, f.s.DeleteProject(ctx, f.account.ID, "my-saas"))
	_, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 100})
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.CreateProject(ctx, f.account.ID, "my-saas")
	must(t, err)
	pg, err = f.s.ListPageViews(ctx, f.account.ID, tidings.PageViewQuery{Project: "my-saas", Limit: 100})
	must(t, err)
	st, err = f.s.PageStats(ctx, f.account.ID, tidings.PageStatsQuery{Project: "my-saas", From: today.Add(-14 * day), To: today})
	must(t, err)
	if len(pg.Views) != 0 || st.Views != 0 || len(st.TopPages) != 0 {
		t.Fatalf("a project made again has %d views, %d in its stats", len(pg.Views), st.Views)
	}
	if _, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "ada"); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("a user of the deleted project: %v", err)
	}
	checkClean(t, f.s)
}

// testPeopleSort: users sort by last seen (the default), events or first seen, each
// largest first, and page by a user ID in that order.
func testPeopleSort(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	// Events first (they move last seen to the time they are received, a few ms
	// apart), then page views, which set first seen (earlier) and, for the user
	// without events, last seen.
	users := []string{"u-a", "u-b", "u-c", "u-d", "u-e"}
	for i, u := range users {
		for range (i * 3) % 5 { // events: a 0, b 3, c 1, d 4, e 2
			f.publish(t, tidings.NewEvent{Event: "e", UserID: u, Timestamp: pageBase.Add(time.Duration(10-i) * time.Hour)})
		}
		time.Sleep(2 * time.Millisecond) // times are kept in ms
	}
	for i, u := range users {
		addViews(t, f.s, f.account.ID, &tidings.NewPageViews{Project: "my-saas", Views: []tidings.PageView{
			view(u, "/", -time.Duration(10-i)*time.Hour), view(u, "/", time.Duration(i)*time.Hour)}})
	}
	lastSeen := func(u *tidings.Person) int64 { return u.LastSeen.UnixMilli() }
	firstSeen := func(u *tidings.Person) int64 { return u.FirstSeen.UnixMilli() }
	events := func(u *tidings.Person) int64 { return u.Events }
	for _, c := range []struct {
		sort string
		key  func(*tidings.Person) int64
	}{{"", lastSeen}, {tidings.PersonSortLastSeen, lastSeen}, {tidings.PersonSortEvents, events}, {tidings.PersonSortFirstSeen, firstSeen}} {
		t.Run("sort="+c.sort, func(t *testing.T) {
			whole, err := f.s.ListPeople(ctx, f.account.ID, tidings.PersonQuery{Project: "my-saas", Sort: c.sort, Limit: 100})
			must(t, err)
			if len(whole.People) != 5 {
				t.Fatalf("%d users", len(whole.People))
			}
			var ids []string
			for i, u := range whole.People {
				ids = append(ids, u.UserID)
				if i > 0 && c.key(u) > c.key(whole.People[i-1]) {
					t.Fatalf("not largest first: %s before %s", whole.People[i-1].UserID, u.UserID)
				}
			}
			keys := map[string]bool{}
			for _, u := range whole.People {
				keys[fmt.Sprint(c.key(u))] = true
			}
			if len(keys) != 5 {
				t.Fatalf("the fixture gives five distinct %q values: %v", c.sort, ids)
			}
			var paged []string
			q := tidings.PersonQuery{Project: "my-saas", Sort: c.sort, Limit: 2}
			for round := 0; ; round++ {
				pg, err := f.s.ListPeople(ctx, f.account.ID, q)
				must(t, err)
				for _, u := range pg.People {
					paged = append(paged, u.UserID)
				}
				if pg.Next == "" || round > 5 {
					break
				}
				q.Before = pg.Next
			}
			if !slices.Equal(paged, ids) {
				t.Fatalf("paged by 2: %v, whole: %v", paged, ids)
			}
		})
	}
	checkClean(t, f.s)
}
