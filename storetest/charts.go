package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// chartData publishes generated events to my-saas: random channels, names, tags
// (plan, a number amount, sometimes a region), users and timestamps spread over 16
// days around Europe/Paris's change back from summer time (2026-10-25), then deletes
// some and lets retention purge the oldest: what a chart must agree with the feed on.
func chartData(t *testing.T, f fixture, seed uint64) time.Time {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 7))
	for _, c := range []string{"signups", "deploys"} {
		_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", c)
		must(t, err)
	}
	start := time.Date(2026, 10, 18, 0, 0, 0, 0, time.UTC)
	names := []string{"Signed up", "Created project", "Paid", "Deploy failed"}
	words := []string{"refund requested", "welcome aboard", "card declined", ""}
	var batch []*tidings.NewEvent
	for i := range 600 {
		e := &tidings.NewEvent{Project: "my-saas", Channel: []string{"payments", "signups", "deploys"}[r.IntN(3)],
			Event: names[r.IntN(len(names))], Description: words[r.IntN(len(words))], Parser: tidings.ParserText,
			Timestamp: start.Add(time.Duration(r.Int64N(int64(16 * 24 * time.Hour)))).Truncate(time.Millisecond),
			Tags:      tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: []string{"free", "pro", "team"}[r.IntN(3)]}}}
		if r.IntN(5) > 0 {
			e.UserID = fmt.Sprintf("u%d", r.IntN(25))
		}
		if r.IntN(2) == 0 {
			e.Tags = append(e.Tags, tidings.Tag{Key: "amount", Kind: tidings.KindNumber, Value: fmt.Sprintf("%d.%02d", r.IntN(300), r.IntN(100))})
		}
		if r.IntN(4) == 0 {
			e.Tags = append(e.Tags, tidings.Tag{Key: "region", Kind: tidings.KindString, Value: []string{"eu", "us"}[r.IntN(2)]})
		}
		batch = append(batch, e)
		if len(batch) == 100 || i == 599 {
			res, err := f.s.PublishEvents(ctx, f.account.ID, &tidings.NewBatch{Events: batch})
			must(t, err)
			for _, p := range res {
				must(t, p.Err)
			}
			batch = nil
		}
	}
	// Deletes: every event named "Paid" of user u3.
	page, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Event: "Paid", Users: []string{"u3"}, Limit: 100})
	must(t, err)
	for _, ev := range page.Events {
		must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", ev.ID))
	}
	// Retention: 7 days, seen from 2026-10-27: the events of the first two days go.
	must(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 7))
	for {
		n, err := f.s.PurgeExpired(ctx, time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC), 1000)
		must(t, err)
		if n == 0 {
			break
		}
	}
	must(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 0))
	return start
}

// feedEvents is every event the feed lists for a search within [from, to).
func feedEvents(t *testing.T, f fixture, s tidings.Search, from, to time.Time) []*tidings.Event {
	return projectEvents(t, f, "my-saas", s, from, to)
}

// projectEvents is every event the feed of a project lists for a search within [from, to).
func projectEvents(t *testing.T, f fixture, project string, s tidings.Search, from, to time.Time) []*tidings.Event {
	t.Helper()
	ctx := context.Background()
	q := tidings.EventQuery{Project: project, Limit: 100}
	if !q.AddSearch(s) {
		return nil
	}
	if q.Since.IsZero() || q.Since.Before(from) {
		q.Since = from
	}
	if q.Until.IsZero() || q.Until.After(to) {
		q.Until = to
	}
	var out []*tidings.Event
	for {
		page, err := f.s.ListEvents(ctx, f.account.ID, q)
		must(t, err)
		out = append(out, page.Events...)
		if page.Next == "" {
			return out
		}
		q.Before = page.Next
	}
}

// expectChart computes a chart from the feed's events, bucket by bucket. With top, a
// split's values not in it are counted together as "(other)".
func expectChart(q *tidings.ChartQuery, events []*tidings.Event, top map[string]bool) map[string][]string {
	out := map[string][]string{}
	starts := q.Starts()
	keyOf := func(ev *tidings.Event) string {
		key := ""
		switch q.Split {
		case "channel":
			key = ev.Channel
		case "tag":
			key = "(other)"
			if tag, ok := ev.Tags.Get(q.SplitBy); ok {
				key = tag.Value
			}
		}
		if top != nil && !top[key] {
			return "(other)"
		}
		return key
	}
	keys := map[string]bool{}
	for _, ev := range events {
		keys[keyOf(ev)] = true
	}
	if q.Split == "" {
		keys[""] = true
	}
	for key := range keys {
		vals := make([]string, len(starts))
		for i, s := range starts {
			from, to := q.Span(s)
			n := 0
			sum := decimal.Zero
			var lo, hi *decimal.Decimal
			users := map[string]bool{}
			for _, ev := range events {
				if keyOf(ev) != key || ev.Timestamp.Before(from) || !ev.Timestamp.Before(to) {
					continue
				}
				if q.Measure == "users" {
					if ev.UserID != "" {
						users[ev.UserID] = true
					}
					continue
				}
				if q.Measure == "count" {
					n++
					continue
				}
				tag, ok := ev.Tags.Get(q.Key)
				if !ok {
					continue
				}
				d := decimal.RequireFromString(tag.Value)
				n++
				sum = sum.Add(d)
				if lo == nil || d.LessThan(*lo) {
					lo = &d
				}
				if hi == nil || d.GreaterThan(*hi) {
					hi = &d
				}
			}
			switch q.Measure {
			case "count":
				vals[i] = fmt.Sprint(n)
			case "users":
				vals[i] = fmt.Sprint(len(users))
			case "sum":
				vals[i] = sum.String()
			case "avg":
				if n > 0 {
					vals[i] = sum.DivRound(decimal.NewFromInt(int64(n)), 6).String()
				}
			case "min":
				if lo != nil {
					vals[i] = lo.String()
				}
			case "max":
				if hi != nil {
					vals[i] = hi.String()
				}
			}
		}
		out[key] = vals
	}
	return out
}

func testChartsMatchFeed(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	start := chartData(t, f, 1)
	now := start.Add(17 * 24 * time.Hour)
	questions := []tidings.ChartParams{
		{}, // events per day, the last 30 days
		{Q: "channel:payments", Bucket: "hour", TZ: "Europe/Paris", From: "2026-10-24T00:00:00+02:00", To: "2026-10-26T00:00:00+01:00"},
		{Q: "channel:payments", Split: "channel", TZ: "Europe/Paris"},
		{Split: "channel", Bucket: "hour", TZ: "Asia/Kolkata", From: "2026-10-24", To: "2026-10-27"},
		{Q: "plan:pro", TZ: "Europe/Paris"},
		{Q: "tag:plan:team", Bucket: "hour", From: "2026-10-24T22:00:00Z", To: "2026-10-26T03:00:00Z"},
		{Split: "tag:plan", TZ: "Europe/Paris"},
		{Split: "tag:region", Bucket: "week"},
		{Split: "tag:amount", Bucket: "month"},
		{Q: "plan:pro channel:signups", Bucket: "week", TZ: "America/New_York"},
		{Q: "refund", TZ: "Europe/Paris"},
		{Q: `event:"Signed up"`, Split: "tag:plan", TZ: "Europe/Paris"},
		{Q: "user:u3", Bucket: "hour", From: "2026-10-24T10:30:00Z", To: "2026-10-25T13:15:00Z"},
		{Measure: "users", TZ: "Europe/Paris"},
		{Measure: "users", Split: "channel", Bucket: "week"},
		{Measure: "sum:amount", Q: "channel:payments", TZ: "Europe/Paris"},
		{Measure: "avg:amount", Split: "tag:plan"},
		{Measure: "min:amount", Q: "plan:team"},
		{Measure: "max:amount", Split: "tag:region", Bucket: "month", TZ: "Europe/Paris"},
		{Q: "welcome since:10d", Bucket: "day"},
	}
	for _, p := range questions {
		p.Project = "my-saas"
		q, err := tidings.ParseChart(p, now)
		must(t, err)
		res, err := charts.Answer(ctx, f.s, f.account.ID, q)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		events := feedEvents(t, f, q.Search, q.From, q.To)
		var top map[string]bool
		if len(res.Series) > 0 && res.Series[len(res.Series)-1].Other {
			// The split's largest values are drawn, the rest together: those are
			// the values with the most events.
			top = map[string]bool{}
			for _, s := range res.Series {
				if s.Key != nil {
					top[*s.Key] = true
				}
			}
			if q.Measure == "count" {
				n := map[string]int{}
				for _, k := range keysOf(expectChart(q, events, nil)) {
					for _, v := range expectChart(q, events, nil)[k] {
						var c int
						fmt.Sscan(v, &c)
						n[k] += c
					}
				}
				least := -1
				for k := range top {
					if least < 0 || n[k] < least {
						least = n[k]
					}
				}
				for k, c := range n {
					if !top[k] && k != "(other)" && c > least {
						t.Errorf("%+v: value %q (%d events) is left out of the %d drawn (the least has %d)", p, k, c, len(top), least)
					}
				}
			}
		}
		want := expectChart(q, events, top)
		got := map[string][]string{}
		for _, s := range res.Series {
			key := ""
			switch {
			case s.Other:
				key = "(other)"
			case s.Key != nil:
				key = *s.Key
			}
			vals := make([]string, len(s.Points))
			for i, pt := range s.Points {
				if len(q.Starts()) != len(s.Points) || !pt.Start.Equal(q.Starts()[i]) {
					t.Fatalf("%+v: point %d starts %v, want the bucket %v", p, i, pt.Start, q.Starts()[i])
				}
				if pt.Value != nil {
					vals[i] = *pt.Value
				}
			}
			got[key] = vals
		}
		for key, w := range want {
			if q.Split != "" && !slices.ContainsFunc(w, func(v string) bool { return v != "" && v != "0" }) {
				continue // a split has no series for a value without events
			}
			if !slices.Equal(got[key], w) {
				t.Errorf("%+v, series %q:\n got %v\nwant %v", p, key, got[key], w)
			}
		}
		if len(got) > len(want) {
			t.Errorf("%+v: series %v, want those of %v", p, keysOf(got), keysOf(want))
		}
	}
	// A sum over a tag that holds text is refused, naming the field.
	_, err := f.s.PublishEvents(ctx, f.account.ID, &tidings.NewBatch{Events: []*tidings.NewEvent{{Project: "my-saas", Channel: "payments",
		Event: "Odd", Parser: tidings.ParserText, Timestamp: start.Add(9 * 24 * time.Hour),
		Tags: tidings.Tags{{Key: "amount", Kind: tidings.KindString, Value: "lots"}}}}})
	must(t, err)
	q, err := tidings.ParseChart(tidings.ChartParams{Project: "my-saas", Measure: "sum:amount"}, now)
	must(t, err)
	_, err = charts.Answer(ctx, f.s, f.account.ID, q)
	wantCode(t, err, tidings.EValidation)
	// Another account's project of the same name is not this one.
	other := newAccount(t, f.s, "globex")
	res, err := charts.Answer(ctx, f.s, other.ID, q)
	must(t, err)
	for _, pt := range res.Series[0].Points {
		if pt.Value != nil && *pt.Value != "0" {
			t.Fatalf("another account's chart sees %s", *pt.Value)
		}
	}
	q, _ = tidings.ParseChart(tidings.ChartParams{Project: "nope"}, now)
	_, err = charts.Answer(ctx, f.s, f.account.ID, q)
	wantCode(t, err, tidings.EProjectNotFound)
	q, _ = tidings.ParseChart(tidings.ChartParams{Project: "my-saas", Q: "channel:nope plan:pro"}, now)
	_, err = charts.Answer(ctx, f.s, f.account.ID, q)
	wantCode(t, err, tidings.EChannelNotFound)
}

func keysOf(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// testChartBudget: a question that reads more events than its budget is refused,
// saying which range works, and ScanEvents stops at its budget.
func testChartBudget(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	chartData(t, f, 2)
	q := tidings.EventQuery{Project: "my-saas", Since: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	n := 0
	err := f.s.ScanEvents(ctx, f.account.ID, q, 50, func(*tidings.Event) error { n++; return nil })
	if err != tidings.ErrScanBudget {
		t.Fatalf("a scan of more than its budget: %v after %d events", err, n)
	}
	if n > 51 {
		t.Fatalf("a scan with a budget of 50 read %d events", n)
	}
	// A page's questions share a budget: once spent, the next question is refused.
	page := charts.WithBudget(ctx, 700)
	users, err := tidings.ParseChart(tidings.ChartParams{Project: "my-saas", Measure: "users", From: "2026-10-01", To: "2026-12-01"}, time.Now())
	must(t, err)
	res, err := charts.Answer(page, f.s, f.account.ID, users)
	must(t, err)
	if res.Scanned == 0 || res.Scanned > 700 {
		t.Fatalf("the first question read %d events", res.Scanned)
	}
	_, err = charts.Answer(page, f.s, f.account.ID, users)
	if wantCode(t, err, tidings.EValidation); !strings.Contains(tidings.ErrorMessage(err), "open this one alone") {
		t.Fatalf("a question past its page's budget: %v", err)
	}
	funnel, err := tidings.ParseFunnel(tidings.FunnelParams{Project: "my-saas", Steps: []string{"plan:pro", "plan:team"}, From: "2026-10-01", To: "2026-11-01"}, time.Now())
	must(t, err)
	if _, err = charts.Funnel(page, f.s, f.account.ID, funnel); !strings.Contains(tidings.ErrorMessage(err), "open this one alone") {
		t.Fatalf("a funnel past its page's budget: %v", err)
	}
	all := 0
	must(t, f.s.ScanEvents(ctx, f.account.ID, q, 10_000, func(*tidings.Event) error { all++; return nil }))
	if want := len(feedEvents(t, f, tidings.Search{}, q.Since, q.Until)); all != want {
		t.Fatalf("scan: %d events, feed: %d", all, want)
	}
}

// testFunnels compares funnels with a direct computation over the feed's events.
func testFunnels(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	start := chartData(t, f, 3)
	now := start.Add(17 * 24 * time.Hour)
	funnels := []tidings.FunnelParams{
		{Steps: []string{`event:"Signed up"`, `event:"Created project"`, "channel:payments"}, Window: "7d", From: "2026-10-20", To: "2026-11-01"},
		{Steps: []string{`event:"Signed up"`, `event:"Paid"`}, Window: "1h", From: "2026-10-18", To: "2026-11-04"},
		{Steps: []string{"plan:pro", "plan:team", "plan:free", "refund"}, Window: "90d", TZ: "Europe/Paris", From: "2026-10-18", To: "2026-11-04"},
		{Steps: []string{"channel:deploys", "channel:deploys"}, Window: "2d"},
	}
	for _, p := range funnels {
		p.Project = "my-saas"
		q, err := tidings.ParseFunnel(p, now)
		must(t, err)
		res, err := charts.Funnel(ctx, f.s, f.account.ID, q)
		must(t, err)
		want := expectFunnel(t, f, q)
		for i := range want {
			g, w := res.Steps[i], want[i]
			if g.Users != w.Users || (g.MedianSeconds == nil) != (w.MedianSeconds == nil) ||
				g.MedianSeconds != nil && *g.MedianSeconds != *w.MedianSeconds || !slices.Equal(g.Dropped, w.Dropped) {
				t.Errorf("%+v step %d: got %d users, median %v, dropped %v; want %d, %v, %v", p, i+1,
					g.Users, ptrText(g.MedianSeconds), g.Dropped, w.Users, ptrText(w.MedianSeconds), w.Dropped)
			}
		}
		if res.Steps[0].Users == 0 {
			t.Errorf("%+v: no user in the funnel: the test data misses it", p)
		}
	}
	// Split by a property: users u0–u9 are on plan pro, u10–u14 on team, the others
	// have none; each group is the funnel of its users alone.
	for i := range 15 {
		plan := "pro"
		if i >= 10 {
			plan = "team"
		}
		_, err := f.s.Identify(ctx, f.account.ID, &tidings.Identify{Project: "my-saas", UserID: fmt.Sprintf("u%d", i),
			Properties: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: plan}}})
		must(t, err)
	}
	p := funnels[0]
	p.Project, p.SplitBy = "my-saas", "plan"
	q, err := tidings.ParseFunnel(p, now)
	must(t, err)
	res, err := charts.Funnel(ctx, f.s, f.account.ID, q)
	must(t, err)
	if len(res.Groups) != 3 || *res.Groups[0].Value != "pro" || *res.Groups[1].Value != "team" || !res.Groups[2].Other {
		t.Fatalf("groups: %+v", res.Groups)
	}
	users := func(lo, hi int) map[string]bool {
		m := map[string]bool{}
		for i := lo; i < hi; i++ {
			m[fmt.Sprintf("u%d", i)] = true
		}
		return m
	}
	for i, in := range []map[string]bool{users(0, 10), users(10, 15), users(15, 25)} {
		want := expectFunnelOf(t, f, q, in)
		for k, w := range want {
			if g := res.Groups[i].Steps[k]; g.Users != w.Users || !slices.Equal(g.Dropped, w.Dropped) {
				t.Errorf("group %d step %d: %d users, dropped %v; want %d, %v", i, k+1, g.Users, g.Dropped, w.Users, w.Dropped)
			}
		}
	}
}

func ptrText(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// expectFunnel is a funnel computed plainly: for each user, every event of the feed
// in time order.
func expectFunnel(t *testing.T, f fixture, q *tidings.FunnelQuery) []tidings.FunnelStep {
	return expectFunnelOf(t, f, q, nil)
}

// expectFunnelOf is the funnel of the users in (nil: all).
func expectFunnelOf(t *testing.T, f fixture, q *tidings.FunnelQuery, in map[string]bool) []tidings.FunnelStep {
	type hit struct {
		at    time.Time
		steps []bool
	}
	byUser := map[string][]hit{}
	for _, ev := range feedEvents(t, f, tidings.Search{}, q.From, q.To.Add(q.Window)) {
		if ev.UserID == "" || in != nil && !in[ev.UserID] {
			continue
		}
		h := hit{at: ev.Timestamp, steps: make([]bool, len(q.Steps))}
		for i, s := range q.Searches {
			eq := tidings.EventQuery{}
			h.steps[i] = eq.AddSearch(s) && eq.Matches(ev) && (!ev.Timestamp.Before(q.From)) &&
				(i > 0 || ev.Timestamp.Before(q.To))
		}
		byUser[ev.UserID] = append(byUser[ev.UserID], h)
	}
	steps := make([]tidings.FunnelStep, len(q.Steps))
	took := make([][]int64, len(q.Steps))
	type drop struct {
		user string
		at   time.Time
	}
	drops := make([][]drop, len(q.Steps))
	for user, hits := range byUser {
		slices.SortFunc(hits, func(a, b hit) int { return a.at.Compare(b.at) })
		var t1, prev time.Time
		k := 0
		for _, h := range hits {
			if h.steps[0] {
				t1, prev, k = h.at, h.at, 1
				break
			}
		}
		if k == 0 {
			continue
		}
		steps[0].Users++
		took[0] = append(took[0], 0)
		for k < len(q.Steps) {
			found := false
			for _, h := range hits {
				if h.steps[k] && !h.at.Before(prev) && !h.at.After(t1.Add(q.Window)) {
					prev, found = h.at, true
					break
				}
			}
			if !found {
				break
			}
			steps[k].Users++
			took[k] = append(took[k], int64(prev.Sub(t1)/time.Second))
			k++
		}
		if k < len(q.Steps) {
			drops[k-1] = append(drops[k-1], drop{user, prev})
		}
	}
	for k := range steps {
		steps[k].Dropped = []string{}
		if k > 0 && len(took[k]) > 0 {
			v := took[k]
			slices.Sort(v)
			m := v[len(v)/2]
			if len(v)%2 == 0 {
				m = (v[len(v)/2-1] + v[len(v)/2]) / 2
			}
			steps[k].MedianSeconds = &m
		}
		slices.SortFunc(drops[k], func(a, b drop) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			if a.user < b.user {
				return -1
			}
			return 1
		})
		for i := 0; i < len(drops[k]) && i < tidings.MaxFunnelUsers; i++ {
			steps[k].Dropped = append(steps[k].Dropped, drops[k][i].user)
		}
	}
	return steps
}

// testBoard: a project's board keeps its cards in order, within its cap, and no
// account reaches another's.
func testBoard(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	var ids []int64
	for i := range 3 {
		c, err := f.s.AddCard(ctx, f.account.ID, "my-saas", &tidings.Card{Kind: tidings.CardChart, Title: fmt.Sprintf("Chart %d", i), Params: "measure=count"})
		must(t, err)
		if c.ID == 0 || c.Position != i || c.Project != "my-saas" {
			t.Fatalf("card %d stored as %+v", i, c)
		}
		ids = append(ids, c.ID)
	}
	titles := func(acct int64) []string {
		cards, err := f.s.ListCards(ctx, acct, "my-saas")
		must(t, err)
		var out []string
		for i, c := range cards {
			if c.Position != i {
				t.Fatalf("card %q at position %d, listed %d", c.Title, c.Position, i)
			}
			out = append(out, c.Title)
		}
		return out
	}
	must(t, f.s.MoveCard(ctx, f.account.ID, "my-saas", ids[2], -1))
	must(t, f.s.MoveCard(ctx, f.account.ID, "my-saas", ids[0], -1)) // first already: stays
	if got := titles(f.account.ID); !slices.Equal(got, []string{"Chart 0", "Chart 2", "Chart 1"}) {
		t.Fatalf("after moves: %v", got)
	}
	must(t, f.s.UpdateCard(ctx, f.account.ID, "my-saas", &tidings.Card{ID: ids[1], Title: "Renamed", Params: "measure=users", Wide: true}))
	must(t, f.s.DeleteCard(ctx, f.account.ID, "my-saas", ids[2]))
	cards, err := f.s.ListCards(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(cards) != 2 || cards[1].Title != "Renamed" || !cards[1].Wide || cards[1].Params != "measure=users" || cards[1].Kind != tidings.CardChart {
		t.Fatalf("after update and delete: %+v %+v", cards[0], cards[len(cards)-1])
	}
	// Tenancy: the other account's project of the same name has its own board, and
	// no card of this one can be changed from it.
	if got := titles(other.ID); len(got) != 0 {
		t.Fatalf("another account's board: %v", got)
	}
	wantCode(t, f.s.DeleteCard(ctx, other.ID, "my-saas", ids[0]), tidings.ENotFound)
	wantCode(t, f.s.MoveCard(ctx, other.ID, "my-saas", ids[0], 1), tidings.ENotFound)
	wantCode(t, f.s.UpdateCard(ctx, other.ID, "my-saas", &tidings.Card{ID: ids[0], Title: "x", Params: "measure=count"}), tidings.ENotFound)
	_, err = f.s.ListCards(ctx, f.account.ID, "nope")
	wantCode(t, err, tidings.EProjectNotFound)
	// The cap.
	for i := len(cards); i < tidings.MaxBoardCards; i++ {
		_, err := f.s.AddCard(ctx, f.account.ID, "my-saas", &tidings.Card{Kind: tidings.CardFunnel, Title: "F", Params: "step=a&step=b"})
		must(t, err)
	}
	_, err = f.s.AddCard(ctx, f.account.ID, "my-saas", &tidings.Card{Kind: tidings.CardChart, Title: "one too many", Params: "measure=count"})
	wantCode(t, err, tidings.ELimitReached)
	if got := titles(f.account.ID); len(got) != tidings.MaxBoardCards {
		t.Fatalf("board holds %d cards", len(got))
	}
	// A deleted project takes its board with it.
	must(t, f.s.DeleteProject(ctx, f.account.ID, "my-saas"))
	_, err = f.s.CreateProject(ctx, f.account.ID, "my-saas")
	must(t, err)
	if got := titles(f.account.ID); len(got) != 0 {
		t.Fatalf("a new project of a deleted one's name has its board: %v", got)
	}
}

// chartsAgree checks charts of a project against its feed, after a workload: events
// per day by channel (the hourly counts) and users per hour (a scan).
func chartsAgree(t *testing.T, f fixture, project string) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []tidings.ChartParams{
		{Project: project, Split: "channel", Range: "90d", TZ: "Europe/Paris"},
		{Project: project, Measure: "users", Bucket: "hour", Range: "24h", Q: "era:new"},
	} {
		q, err := tidings.ParseChart(p, time.Now())
		must(t, err)
		res, err := charts.Answer(ctx, f.s, f.account.ID, q)
		must(t, err)
		want := expectChart(q, projectEvents(t, f, project, q.Search, q.From, q.To), nil)
		for _, s := range res.Series {
			key := ""
			if s.Key != nil {
				key = *s.Key
			}
			for i, pt := range s.Points {
				if w := want[key]; w == nil || pt.Value == nil || *pt.Value != w[i] {
					t.Errorf("%s of %s, series %q, bucket %v: chart %v, feed %v", p.Measure, project, key, pt.Start, ptrStr(pt.Value), w)
					break
				}
			}
		}
	}
}

func ptrStr(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}
