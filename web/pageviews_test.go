package web_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// addViews stores page views of my-saas as POST /v1/page would: checked, in batches.
func (e *env) addViews(account *tidings.Account, views ...tidings.PageView) {
	e.t.Helper()
	for len(views) > 0 {
		n := min(len(views), tidings.MaxPageViewsPerCall)
		c := &tidings.NewPageViews{Project: "my-saas", Host: "shop.example", Views: append([]tidings.PageView(nil), views[:n]...)}
		var p tidings.Problems
		c.Check(&p, time.Now(), true)
		if err := p.Err(); err != nil {
			e.t.Fatal(err)
		}
		if err := e.store.AddPageViews(e.t.Context(), account.ID, c); err != nil {
			e.t.Fatal(err)
		}
		views = views[n:]
	}
}

// order fails unless the texts appear in body in this order.
func order(t *testing.T, body string, texts ...string) {
	t.Helper()
	at := -1
	for _, s := range texts {
		i := strings.Index(body[at+1:], s)
		if i < 0 {
			t.Fatalf("%q is not after %q: %s", s, texts, excerpt(body[at+1:]))
		}
		at += 1 + i
	}
}

// journeyOf is a profile's journey: the page after its heading.
func journeyOf(t *testing.T, body string) string {
	t.Helper()
	_, j, ok := strings.Cut(body, "<h2>Journey</h2>")
	if !ok {
		t.Fatalf("no journey: %s", excerpt(body))
	}
	return j
}

// TestPagesView: the empty state says how to add the script; then page views and
// unique users per day, top pages, entries and referrers, over the range picked; a
// range that is not offered is refused with a message; another account's project is
// not there.
func TestPagesView(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	p := c.get("/p/my-saas/pages")
	p.want(t, 200, "No page views yet", `&lt;script id=&#34;logsnag-script&#34; async src=&#34;`+e.srv.URL+`/ls.js&#34;&gt;&lt;/script&gt;`,
		`setConfig`, `my-saas`, `aria-current="page">Pages</a>`)
	c.get("/p/my-saas").want(t, 200, `<a href="/p/my-saas/pages">Pages</a>`) // a tab of every project page

	now := time.Now().UTC()
	old := now.AddDate(0, 0, -20)
	e.addViews(acme,
		tidings.PageView{UserID: "ada", Path: "/pricing?utm_source=news&email=a@b.c", Referrer: "https://www.google.com/search?q=x", Timestamp: now.Add(-3 * time.Hour)},
		tidings.PageView{UserID: "ada", Path: "/signup", Referrer: "https://shop.example/pricing", Timestamp: now.Add(-2 * time.Hour)},
		tidings.PageView{UserID: "bob", Path: "/pricing", Referrer: "https://news.ycombinator.com/item?id=1", Timestamp: now.Add(-time.Hour)},
		tidings.PageView{UserID: "bob", Path: "/docs", Timestamp: old},
	)
	p = c.get("/p/my-saas/pages")
	p.want(t, 200, "Page views and unique users per day", `<svg class="plot wide-plot"`, "Top pages", "Entry pages", "Top referrers",
		"/pricing?utm_source=news", "google.com", "news.ycombinator.com", "/docs", "Unique users")
	if strings.Contains(p.body, "No page views yet") || strings.Contains(p.body, "email=a@b.c") {
		t.Fatalf("pages view: %s", excerpt(p.body))
	}
	tiles := regexp.MustCompile(`<dt>Page views</dt><dd>(\d+)</dd>`).FindStringSubmatch(p.body)
	if tiles == nil || tiles[1] != "4" {
		t.Fatalf("page views over 30 days: %v", tiles)
	}
	// 7 days leave out the view of 20 days ago; the picker marks the range.
	p = c.get("/p/my-saas/pages?range=7d")
	p.want(t, 200, `<dt>Page views</dt><dd>3</dd>`, `aria-current="true">7 days</a>`)
	if strings.Contains(p.body, "/docs") {
		t.Fatal("a view of 20 days ago in the last 7 days")
	}
	c.get("/p/my-saas/pages?range=12m").want(t, 200, `<dt>Page views</dt><dd>4</dd>`)
	c.get("/p/my-saas/pages?range=90d").want(t, 200, `<dt>Page views</dt><dd>4</dd>`)
	c.get("/p/my-saas/pages?range=2y").want(t, 400, "Unknown range “2y”", `<dt>Page views</dt><dd>4</dd>`)
	c.get("/p/nope/pages").want(t, 404, "There is no project")

	// A range with no views, in a project that has some: no instructions, a hint.
	e.store.CreateProject(t.Context(), acme.ID, "blog")
	e.addViewsTo(acme, "blog", tidings.PageView{UserID: "carol", Path: "/post", Timestamp: old})
	p = c.get("/p/blog/pages?range=7d")
	p.want(t, 200, "No page views in the last 7 days. Try a longer range.")
	if strings.Contains(p.body, "No page views yet") {
		t.Fatal("the script's instructions for a project with page views")
	}

	globex, err := e.store.CreateAccount(t.Context(), "globex")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := e.user(globex, "eve@example.com", tidings.UserOwner)
	other.get("/p/my-saas/pages").want(t, 404)
	e.store.CreateProject(t.Context(), globex.ID, "my-saas")
	if p := other.get("/p/my-saas/pages"); p.status != 200 || strings.Contains(p.body, "/pricing") {
		t.Fatalf("another account's project of the same name shows acme's page views: %d %s", p.status, excerpt(p.body))
	}
}

func (e *env) addViewsTo(account *tidings.Account, project string, views ...tidings.PageView) {
	e.t.Helper()
	c := &tidings.NewPageViews{Project: project, Views: views}
	var p tidings.Problems
	c.Check(&p, time.Now(), true)
	if err := p.Err(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.AddPageViews(e.t.Context(), account.ID, c); err != nil {
		e.t.Fatal(err)
	}
}

// TestUsersList: names and initials avatars from the name and email properties (the ID
// stays visible), page views, the orders kept with the search, a refused order.
func TestUsersList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	ctx := t.Context()
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	base := time.Now().UTC().Add(-time.Hour)
	for _, u := range []struct {
		id    string
		props tidings.Tags
	}{
		{"u-1", tidings.Tags{str("name", "Ada Lovelace"), str("email", "ada@example.com"), str("plan", "pro")}},
		{"u-2", tidings.Tags{str("email", "grace@example.com"), str("plan", "pro")}},
		{"u-3", tidings.Tags{str("plan", "free")}},
	} {
		if _, err := e.store.Identify(ctx, acme.ID, &tidings.Identify{Project: "my-saas", UserID: u.id, Properties: u.props}); err != nil {
			t.Fatal(err)
		}
	}
	// u-2 has the most events, u-3 was seen last (a page view), u-1 first.
	for i := range 3 {
		e.publish(acme, tidings.NewEvent{Event: "Clicked " + strconv.Itoa(i), UserID: "u-2", Timestamp: base.Add(time.Duration(i) * time.Minute)})
	}
	e.addViews(acme, tidings.PageView{UserID: "u-3", Path: "/a", Timestamp: time.Now().UTC()},
		tidings.PageView{UserID: "u-3", Path: "/b", Timestamp: time.Now().UTC()})

	p := c.get("/p/my-saas/users")
	p.want(t, 200, `<span class="person-name">Ada Lovelace</span><span class="person-id">u-1</span>`,
		`<span class="person-name">grace@example.com</span><span class="person-id">u-2</span>`,
		`<span class="person-name">u-3</span>`, `aria-hidden="true">AL</span>`, `aria-hidden="true">G</span>`,
		`<td data-label="Page views" class="num">2</td>`, `aria-current="page">Users</a>`, `href="/p/my-saas/groups">Groups</a>`,
		`<option value="last_seen" selected>Last seen</option>`)
	if list := regexp.MustCompile(`(?s)<table class="people users">.*</table>`).FindString(p.body); list == "" || strings.Contains(list, "<img") {
		t.Fatalf("no list, or a picture in it (avatars are initials, never images from elsewhere): %s", list)
	}
	order(t, p.body, ">u-3<", ">u-2<", ">u-1<") // last seen first
	p = c.get("/p/my-saas/users?sort=events")
	p.want(t, 200, `<option value="events" selected>Events</option>`, `aria-sort="descending">Events</th>`)
	order(t, p.body, ">u-2<", ">u-1<")
	order(t, p.body, ">u-2<", ">u-3<")
	p = c.get("/p/my-saas/users?sort=first_seen&q=plan:pro")
	p.want(t, 200, `<option value="first_seen" selected>First seen</option>`, "Clear filter", `href="/p/my-saas/users?sort=first_seen" class="clear"`)
	order(t, p.body, ">u-2<", ">u-1<")
	if strings.Contains(p.body, ">u-3<") {
		t.Fatal("plan:pro lists u-3")
	}
	p = c.get("/p/my-saas/users?sort=name")
	p.want(t, 400, "Unknown order “name”: sort users by last seen, events or first seen.")
	if strings.Contains(p.body, "person-name") {
		t.Fatal("a refused order lists users")
	}
	c.get("/p/my-saas/groups").want(t, 200, `aria-current="page">Groups</a>`, `href="/p/my-saas/users">Users</a>`)

	// More users than a page: the next page keeps the order and the search.
	for i := range 55 {
		e.store.Identify(ctx, acme.ID, &tidings.Identify{Project: "my-saas", UserID: "bulk-" + strconv.Itoa(i), Properties: tidings.Tags{str("plan", "pro")}})
	}
	p = c.get("/p/my-saas/users?sort=events&q=plan:pro")
	m := regexp.MustCompile(`href="(/p/my-saas/users\?[^"]+)" rel="next"`).FindStringSubmatch(p.body)
	if m == nil || !strings.Contains(m[1], "sort=events") || !strings.Contains(m[1], "q=plan%3Apro") || !strings.Contains(m[1], "before=") {
		t.Fatalf("next page link: %v", m)
	}
	c.get(strings.ReplaceAll(m[1], "&amp;", "&")).want(t, 200, `<option value="events" selected>`)
}

// TestProfile: a user's profile — name, avatar, first and last seen, sessions, events,
// page views, the activity chart with its text, top pages — and the journey with the
// page views folded between the events, counted; another account's user is not there.
func TestProfile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	ctx := t.Context()
	if _, err := e.store.Identify(ctx, acme.ID, &tidings.Identify{Project: "my-saas", UserID: "u-42",
		Properties: tidings.Tags{{Key: "name", Kind: tidings.KindString, Value: "Ada Lovelace"}, {Key: "plan", Kind: tidings.KindString, Value: "pro"}}}); err != nil {
		t.Fatal(err)
	}
	e.store.Group(ctx, acme.ID, &tidings.GroupChange{Project: "my-saas", GroupID: "engines", UserID: "u-42"})
	t0 := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Minute)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	e.publish(acme, tidings.NewEvent{Event: "Signed up", UserID: "u-42", Timestamp: at(0)})
	e.addViews(acme,
		tidings.PageView{UserID: "u-42", Path: "/welcome", Title: "Welcome", Timestamp: at(1)},
		tidings.PageView{UserID: "u-42", Path: "/pricing", Timestamp: at(2)},
		tidings.PageView{UserID: "u-42", Path: "/pricing", Timestamp: at(3)})
	e.publish(acme, tidings.NewEvent{Event: "Upgraded", UserID: "u-42", Timestamp: at(4)})
	// A second session: more than 30 minutes later.
	e.addViews(acme, tidings.PageView{UserID: "u-42", Path: "/billing", Timestamp: at(60)})

	p := c.get("/p/my-saas/users/u-42")
	p.want(t, 200, "<h1>Ada Lovelace", `User ID <code>u-42</code>`, `aria-hidden="true">AL</span>`,
		`<dt>Sessions</dt><dd>2</dd>`, `<dt>Events</dt><dd>2</dd>`, `<dt>Page views</dt><dd>4</dd>`,
		`role="img" aria-label="Activity of Ada Lovelace, per day (UTC)`, "Events: total 2", "Page views: total 4",
		`<details class="numbers">`, "Top pages", "plan: pro", `<a href="/p/my-saas/groups/engines">engines</a>`, "Journey")
	order(t, p.body, "Top pages", `<span class="top-value">/pricing</span>`, `<td>2</td>`)
	// Newest first: the billing page, Upgraded, the three pages before it, Signed up.
	order(t, p.body, "Viewed 1 page", "/billing", `>Upgraded</a>`, "Viewed 3 pages", "/pricing", "/pricing", "/welcome", "Welcome", `>Signed up</a>`)
	if n := strings.Count(p.body, `<details class="views-fold">`); n != 2 {
		t.Fatalf("%d folds, want 2", n)
	}

	// A visitor known by page views alone: named by the ID, the views folded, no events.
	e.addViews(acme, tidings.PageView{UserID: "visitor-1", Path: "/", Timestamp: at(5)}, tidings.PageView{UserID: "visitor-1", Path: "/docs", Timestamp: at(6)})
	p = c.get("/p/my-saas/users/visitor-1")
	p.want(t, 200, "<h1>visitor-1", `aria-hidden="true">V</span>`, `<dt>Sessions</dt><dd>1</dd>`, `<dt>Events</dt><dd>0</dd>`, `<dt>Page views</dt><dd>2</dd>`, "Viewed 2 pages")
	if strings.Contains(p.body, "User ID <code>") {
		t.Fatal("the ID said twice")
	}

	// An unknown user, another account's user: not there.
	c.get("/p/my-saas/users/nobody").want(t, 404)
	globex, err := e.store.CreateAccount(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	e.store.CreateProject(ctx, globex.ID, "my-saas")
	other, _ := e.user(globex, "eve@example.com", tidings.UserOwner)
	other.get("/p/my-saas/users/u-42").want(t, 404)
}

// TestProfileJourneyPages: each page of a journey folds the page views of its own span
// (none twice, none lost), and a span with more than MaxPageViewsRead says "many".
func TestProfileJourneyPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	t0 := time.Now().UTC().Add(-20 * time.Hour).Truncate(time.Minute)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	// 52 events a minute apart: the first page shows the newest 50.
	for i := range 52 {
		e.publish(acme, tidings.NewEvent{Event: "Step " + strconv.Itoa(i), UserID: "u-1", Timestamp: at(60 * i)})
	}
	// Two views between steps 0 and 1 (on the second page), one between 50 and 51.
	e.addViews(acme, tidings.PageView{UserID: "u-1", Path: "/early-a", Timestamp: at(20)},
		tidings.PageView{UserID: "u-1", Path: "/early-b", Timestamp: at(40)},
		tidings.PageView{UserID: "u-1", Path: "/late", Timestamp: at(60*50 + 30)})
	p := c.get("/p/my-saas/users/u-1")
	order(t, p.body, ">Step 51<", "Viewed 1 page", "/late", ">Step 50<", ">Step 2<")
	if strings.Contains(journeyOf(t, p.body), "/early") { // the top pages have them all
		t.Fatal("the second page's views on the first")
	}
	m := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatal("no older events link")
	}
	p = c.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	p.want(t, 200, "Viewed 2 pages")
	order(t, p.body, ">Step 1<", "Viewed 2 pages", "/early-b", "/early-a", ">Step 0<")
	if strings.Contains(journeyOf(t, p.body), "/late") {
		t.Fatal("the first page's views on the second")
	}

	// More than MaxPageViewsRead views after the last event: the fold says "many".
	// Their paths and titles as long as allowed: the page stays small.
	many := make([]tidings.PageView, tidings.MaxPageViewsRead+5)
	for i := range many {
		path := "/p/" + strconv.Itoa(i) + "/" + strings.Repeat("x", tidings.MaxPagePathLen-10)
		many[i] = tidings.PageView{UserID: "u-1", Path: path, Title: strings.Repeat("t", tidings.MaxPageTitleLen), Timestamp: at(60*51 + 1 + i%50)}
	}
	e.addViews(acme, many...)
	p = c.get("/p/my-saas/users/u-1")
	p.want(t, 200, "Viewed many pages", "… and 950 more; older page views are not folded in here")
	if len(p.body) > 160<<10 {
		t.Fatalf("a profile of %d KiB", len(p.body)>>10)
	}
	order(t, p.body, "Viewed many pages", ">Step 51<")
	if n := strings.Count(p.body, `<details class="views-fold">`); n != 1 {
		t.Fatalf("%d folds with views beyond the limit, want 1 (the rest are not read)", n)
	}
}

// TestGPCSetting: "Honour Global Privacy Control" is on by default; an owner turns it
// off and on with the settings' form; a member only reads it.
func TestGPCSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	c.get("/settings/projects/my-saas").want(t, 200, `name="honour" value="true" aria-describedby="gpc-my-saas-hint" checked>`, `action="/settings/projects/my-saas/gpc"`)
	c.post("/settings/projects/my-saas/gpc", "honour", "false").redirects(t, "/settings/projects/my-saas")
	if p, _ := e.store.FindProject(t.Context(), acme.ID, "my-saas"); !p.IgnoreGPC {
		t.Fatal("GPC still honoured")
	}
	c.get("/settings/projects/my-saas").want(t, 200, `name="honour" value="true" aria-describedby="gpc-my-saas-hint">`, "Saved: honour Global Privacy Control is off.")
	c.post("/settings/projects/my-saas/gpc", "honour", "true").redirects(t, "/settings/projects/my-saas")
	if p, _ := e.store.FindProject(t.Context(), acme.ID, "my-saas"); p.IgnoreGPC {
		t.Fatal("GPC not honoured again")
	}
	c.post("/settings/projects/my-saas/gpc", "honour", "maybe").want(t, 400, "honour")
	c.post("/settings/projects/nope/gpc", "honour", "false").want(t, 404)
	// CSRF: a form from another site is refused.
	c.request("POST", "/settings/projects/my-saas/gpc", "application/x-www-form-urlencoded", strings.NewReader("honour=false"),
		"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example").want(t, 403)
	member, _ := e.member(acme, "bob@example.com")
	member.get("/settings/projects/my-saas").want(t, 200, "<dt>Honour Global Privacy Control</dt><dd>On</dd>")
	member.post("/settings/projects/my-saas/gpc", "honour", "false").want(t, 403)
	if p, _ := e.store.FindProject(t.Context(), acme.ID, "my-saas"); p.IgnoreGPC {
		t.Fatal("a member or another site changed the setting")
	}
}
