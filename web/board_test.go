package web_test

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/web"
)

// boardEnv is a dashboard at a fixed time with events in my-saas: payments by plan
// with an amount, and sign-ups, over the last days.
func boardEnv(t *testing.T) (*env, *client, *tidings.Account) {
	t.Helper()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := newEnvWith(t, web.Config{Now: func() time.Time { return now }})
	c := e.owner()
	acme := e.account("acme")
	c.post("/settings/projects/my-saas/channels", "name", "signups").redirects(t, "/settings/projects/my-saas")
	for i, u := range []string{"ada", "bob", "cy", "dee"} {
		at := now.Add(-time.Duration(i+1) * 24 * time.Hour)
		e.publish(acme, tidings.NewEvent{Project: "my-saas", Channel: "signups", Event: "Signed up", UserID: u, Timestamp: at})
		if i < 2 {
			plan := []string{"pro", "free"}[i]
			e.publish(acme, tidings.NewEvent{Event: "Paid", UserID: u, Timestamp: at.Add(time.Hour),
				Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: plan}, {Key: "amount", Kind: tidings.KindNumber, Value: "12.5"}}})
		}
	}
	return e, c, acme
}

func cards(t *testing.T, e *env, acme *tidings.Account) []*tidings.Card {
	t.Helper()
	list, err := e.store.(tidings.ChartStore).ListCards(t.Context(), acme.ID, "my-saas")
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestBoard(t *testing.T) {
	t.Parallel()
	e, c, acme := boardEnv(t)
	// An empty board: a live preview and one-click charts.
	c.get("/p/my-saas/charts").want(t, 200, "Your board is empty", "<svg", "Add “Events per day”", `<title>Sun 29 Nov: 2 events</title>`)

	// Chart this, from a feed search: the form filled in, its preview drawn.
	feed := c.get("/p/my-saas?q=plan%3Apro")
	feed.want(t, 200, "Chart this")
	link := regexp.MustCompile(`href="(/p/my-saas/charts/new\?[^"]+)" class="chart-this"`).FindStringSubmatch(feed.body)
	if link == nil {
		t.Fatal("no Chart this link")
	}
	form := c.get(strings.ReplaceAll(link[1], "&amp;", "&"))
	form.want(t, 200, `value="plan:pro"`, "Events · plan:pro · per day", "<title>Sun 29 Nov: 1 event</title>", "Save to the board")

	// Bad input: 400 with a message next to each field, nothing saved.
	bad := c.post("/p/my-saas/charts/new", "title", "Bad", "measure", "sum", "bucket", "fortnight", "display", "pie", "split", "tag")
	bad.want(t, 400, `id="cf-measure-err"`, "name the number tag", `id="cf-display-err"`, `id="cf-split-err"`)
	c.post("/p/my-saas/charts/new", "measure", "count", "bucket", "fortnight").want(t, 400, `id="cf-bucket-err"`, "must be one of hour, day, week, month")
	c.post("/p/my-saas/charts/new", "measure", "count", "q", "since:nonsense").want(t, 400, `id="cf-q-err"`)
	c.post("/p/my-saas/charts/new", "measure", "count", "bucket", "hour", "range", "12m").want(t, 400, `id="cf-bucket-err"`, "hour buckets cover at most 33 days")
	if n := len(cards(t, e, acme)); n != 0 {
		t.Fatalf("%d cards saved from bad forms", n)
	}
	// A form from another site is refused (cross-origin protection).
	c.do("POST", "/p/my-saas/charts/new", url.Values{"q": {"x"}}, "Sec-Fetch-Site", "cross-site").want(t, 403)

	// Save: the board shows the card with its question, CSV and actions.
	c.post("/p/my-saas/charts/new", "title", "Revenue", "measure", "sum", "key", "amount", "q", "channel:payments", "split", "tag", "split_key", "plan",
		"display", "stacked", "range", "7d").want(t, 303)
	c.post("/p/my-saas/charts/new", "title", "Sign-ups", "q", "channel:signups", "display", "number", "wide", "1").want(t, 303)
	list := cards(t, e, acme)
	if len(list) != 2 || list[0].Params != "bucket=day&display=stacked&measure=sum%3Aamount&q=channel%3Apayments&split=tag%3Aplan" || !list[1].Wide {
		t.Fatalf("cards %+v %+v", list[0], list[1])
	}
	rev, signups := list[0].ID, list[1].ID
	c.post("/p/my-saas/charts/"+id(rev)+"/move", "by", "1", "range", "7d").redirects(t, "/p/my-saas/charts?range=7d#card-"+id(rev))
	c.post("/p/my-saas/charts/"+id(rev)+"/move", "by", "-1", "range", "7d").redirects(t, "/p/my-saas/charts?range=7d#card-"+id(rev))
	board := c.get("/p/my-saas/charts?range=7d")
	board.want(t, 200, "Revenue", "Sum of amount · channel:payments · by tag plan · per day", "<title>Sat 28 Nov · plan free: 12.5</title>",
		`href="/p/my-saas/charts/`+id(rev)+`.csv?range=7d"`, "Sign-ups", `class="num">4<`, "Move down", `aria-current="true">7 days<`)
	if strings.Contains(board.body, "Your board is empty") {
		t.Fatal("a board with cards shows its empty state")
	}
	// The number's change: 4 sign-ups this week, none the week before.
	board.want(t, 200, `class="change up">new<`)
	// A custom range includes its last day.
	c.get("/p/my-saas/charts?from=2026-11-28&to=2026-11-29").want(t, 200, `class="num">2<`, "<title>Sun 29 Nov · plan pro: 12.5</title>")
	c.get("/p/my-saas/charts?from=2026-11-29&to=2026-11-28").want(t, 400, "Range: to: must come after from")
	// A question too costly for the board's range says so in its card.
	c.post("/p/my-saas/charts/new", "title", "Hourly", "bucket", "hour", "display", "line").want(t, 303)
	c.get("/p/my-saas/charts?range=12m").want(t, 200, `class="error card-error"`, "hour buckets cover at most 33 days")
	c.post("/p/my-saas/charts/"+id(cards(t, e, acme)[2].ID)+"/delete").want(t, 303)

	// CSV: a row per bucket, a column per series.
	csv := c.get("/p/my-saas/charts/" + id(rev) + ".csv?range=7d")
	csv.want(t, 200, "bucket_start,plan free,plan pro\n", "2026-11-28T00:00:00Z,12.5,0\n", "2026-11-29T00:00:00Z,0,12.5\n")
	if cd := csv.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || csv.header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("headers %v", csv.header)
	}
	if n := strings.Count(csv.body, "\n"); n != 8 {
		t.Fatalf("%d lines, want a header and 7 days: %s", n, csv.body)
	}
	c.get("/p/my-saas/charts/preview.csv?q=channel%3Asignups&range=7d").want(t, 200, "bucket_start,Events\n", "2026-11-29T00:00:00Z,1\n")
	c.get("/p/my-saas/charts/"+id(rev)+".txt").want(t, 404)

	// Arrange: move, wide, edit, delete.
	c.post("/p/my-saas/charts/"+id(signups)+"/move", "by", "-1", "range", "7d").redirects(t, "/p/my-saas/charts?range=7d#card-"+id(signups))
	c.post("/p/my-saas/charts/"+id(rev)+"/wide", "wide", "1").redirects(t, "/p/my-saas/charts#card-"+id(rev))
	list = cards(t, e, acme)
	if list[0].ID != signups || !list[1].Wide {
		t.Fatalf("after move and wide: %+v %+v", list[0], list[1])
	}
	c.get("/p/my-saas/charts/"+id(rev)+"/edit").want(t, 200, `value="Revenue"`, `value="amount"`, `value="plan"`, "Save changes")
	c.post("/p/my-saas/charts/"+id(rev)+"/edit", "title", "Revenue", "measure", "bogus").want(t, 400, `id="cf-measure-err"`)
	c.post("/p/my-saas/charts/"+id(rev)+"/edit", "title", "Revenue by channel", "measure", "sum", "key", "amount", "split", "channel", "display", "bar").want(t, 303)
	c.get("/p/my-saas/charts?range=7d").want(t, 200, "Revenue by channel", "by channel")
	c.post("/p/my-saas/charts/"+id(signups)+"/delete").want(t, 303)
	if n := len(cards(t, e, acme)); n != 1 {
		t.Fatalf("%d cards after a delete", n)
	}

	// A member arranges the board too: every member sees the same one.
	m, _ := e.member(acme, "mo@example.com")
	m.get("/p/my-saas/charts?range=7d").want(t, 200, "Revenue by channel")
	m.post("/p/my-saas/charts/new", "title", "Users", "measure", "users", "display", "line").want(t, 303)
	if n := len(cards(t, e, acme)); n != 2 {
		t.Fatalf("%d cards after a member's", n)
	}
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

// TestBoardTenancy: another account's card ids are not found, on every route.
func TestBoardTenancy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	c := e.owner()
	acme := e.account("acme")
	c.post("/p/my-saas/charts/new", "title", "Mine", "display", "bar").want(t, 303)
	cid := id(cards(t, e, acme)[0].ID)
	g := e.client()
	g.post("/signup", "account", "globex", "email", "eve@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(t, "/")
	g.post("/settings/projects", "name", "my-saas").redirects(t, "/settings/projects/my-saas")
	for _, path := range []string{"/p/my-saas/charts/" + cid + "/edit", "/p/my-saas/charts/" + cid + ".csv", "/p/my-saas/funnels/" + cid + "/dropoff?step=1"} {
		g.get(path).want(t, 404)
	}
	for _, path := range []string{"/move", "/wide", "/delete", "/edit"} {
		g.post("/p/my-saas/charts/"+cid+path).want(t, 404)
	}
	g.get("/p/my-saas/charts").want(t, 200, "Your board is empty")
	if n := len(cards(t, e, acme)); n != 1 {
		t.Fatalf("acme's board has %d cards", n)
	}
	c.get("/p/other/charts").want(t, 404)
}

func TestFunnelForm(t *testing.T) {
	t.Parallel()
	e, c, acme := boardEnv(t)
	c.get("/p/my-saas/funnels/new").want(t, 200, `id="ff-step-3"`, "Add a step")
	// Add a step: the form again, one more input, what was typed kept.
	add := c.get("/p/my-saas/funnels/new?step=event%3A%22Signed+up%22&step=&step=&add=1")
	add.want(t, 200, `id="ff-step-4"`, `value="event:&#34;Signed up&#34;"`)
	// One step, a window too long: 400, messages, nothing saved.
	c.post("/p/my-saas/funnels/new", "step", "channel:signups", "window", "200d").want(t, 400, "a funnel has 2 to 8 steps", `id="ff-window-err"`)
	if n := len(cards(t, e, acme)); n != 0 {
		t.Fatalf("%d cards", n)
	}
	// A preview, then save.
	pre := c.get("/p/my-saas/funnels/new?step=channel%3Asignups&step=channel%3Apayments&step=&window=7d")
	pre.want(t, 200, "<strong>4 users</strong>", "<strong>2 users</strong>", "50 % of step 1", "2 dropped", "median 1 h")
	drop := regexp.MustCompile(`href="(/p/my-saas/funnels/dropoff\?[^"]+)">2 dropped`).FindStringSubmatch(pre.body)
	if drop == nil {
		t.Fatal("no drop-off link in the preview")
	}
	c.get(strings.ReplaceAll(drop[1], "&amp;", "&")).want(t, 200, `href="/p/my-saas/users/cy"`, `href="/p/my-saas/users/dee"`)
	c.post("/p/my-saas/funnels/new", "title", "Sign-up to payment", "step", "channel:signups", "step", "", "step", "channel:payments", "window", "7d").want(t, 303)
	list := cards(t, e, acme)
	if len(list) != 1 || list[0].Kind != tidings.CardFunnel || list[0].Params != "step=channel%3Asignups&step=channel%3Apayments&window=7d" {
		t.Fatalf("%+v", list)
	}
	fid := id(list[0].ID)
	board := c.get("/p/my-saas/charts")
	board.want(t, 200, "Sign-up to payment", "2 steps within 7 d: channel:signups → channel:payments", `href="/p/my-saas/funnels/`+fid+`/dropoff?step=1"`)
	c.get("/p/my-saas/funnels/"+fid+"/dropoff?step=1").want(t, 200, "Dropped after step 1", `href="/p/my-saas/users/cy"`)
	c.get("/p/my-saas/funnels/"+fid+"/dropoff?step=2").want(t, 400)
	c.get("/p/my-saas/funnels/"+fid+"/edit").want(t, 200, `value="channel:signups"`, "Save changes")
	c.post("/p/my-saas/funnels/"+fid+"/edit", "title", "Sign-up to payment", "step", "channel:signups", "step", "channel:payments", "step", "channel:signups", "window", "24h").want(t, 303)
	c.get("/p/my-saas/charts").want(t, 200, "3 steps within 1 d")
	// Split by a user property: a row per value.
	for u, plan := range map[string]string{"ada": "pro", "bob": "free", "cy": "pro"} {
		if _, err := e.store.Identify(t.Context(), acme.ID, &tidings.Identify{Project: "my-saas", UserID: u,
			Properties: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: plan}}}); err != nil {
			t.Fatal(err)
		}
	}
	split := c.get("/p/my-saas/funnels/new?step=channel%3Asignups&step=channel%3Apayments&split=plan")
	split.want(t, 200, "<caption>By plan</caption>", "<th scope=\"row\">pro</th><td>2</td><td>1</td><td>50 %</td>", "<th scope=\"row\">free</th><td>1</td><td>1</td><td>100 %</td>")
	c.get("/p/my-saas/funnels/new?step=channel%3Asignups&step=channel%3Apayments&split=no+such").want(t, 400, `id="ff-split-err"`)
	// The chart form of a funnel's card leads to the funnel form, and back.
	c.get("/p/my-saas/charts/"+fid+"/edit").redirects(t, "/p/my-saas/funnels/"+fid+"/edit")
}

func TestInsightHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	dollar := "$"
	for _, v := range []string{"10", "12.5", "11"} {
		ch := &tidings.InsightChange{Project: "my-saas", Title: "Revenue & co", Value: v, ValueKind: tidings.KindNumber, Change: "update", Prefix: &dollar}
		if _, err := e.store.ApplyInsight(t.Context(), acme.ID, ch); err != nil {
			t.Fatal(err)
		}
	}
	c.get("/p/my-saas/insights").want(t, 200, `href="/p/my-saas/insights/history?title=Revenue&#43;%26&#43;co"`)
	h := c.get("/p/my-saas/insights/history?title=Revenue+%26+co&range=7d")
	h.want(t, 200, "Revenue &amp; co", "<polyline", ": 12.5</title>", `aria-current="true">7 days<`, "latest 11", `<span class="num">$11</span>`)
	c.get("/p/my-saas/insights/history?title=Nope").want(t, 404)
}
