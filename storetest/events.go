package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func testEvents(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	tags := tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"},
		{Key: "seats", Kind: tidings.KindNumber, Value: "12.50"}, {Key: "trial", Kind: tidings.KindBool, Value: "false"}}
	ev := f.publish(t, tidings.NewEvent{Event: "New Subscription", Description: "**paid**", Icon: "💰",
		Notify: true, Tags: tags, Parser: tidings.ParserMarkdown, UserID: "u-1", Timestamp: epoch})
	if ev.ID == "" || !ev.Timestamp.Equal(epoch) || ev.CreatedAt.IsZero() {
		t.Fatalf("stored event = %+v", ev)
	}
	page, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	if len(page.Events) != 1 || page.Next != "" {
		t.Fatalf("ListEvents = %+v", page)
	}
	got := page.Events[0]
	gotJSON, _ := json.Marshal(got.Tags)
	if got.ID != ev.ID || got.Event != "New Subscription" || got.Description != "**paid**" || got.Icon != "💰" ||
		!got.Notify || got.Parser != "markdown" || got.UserID != "u-1" || got.Channel != "payments" ||
		string(gotJSON) != `{"plan":"premium","seats":12.50,"trial":false}` || !got.Timestamp.Equal(epoch) {
		t.Fatalf("read back %+v tags %s", got, gotJSON)
	}

	_, err = f.s.PublishEvent(ctx, f.account.ID, &tidings.NewEvent{Project: "nope", Channel: "payments", Event: "x", Parser: "text"})
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.PublishEvent(ctx, f.account.ID, &tidings.NewEvent{Project: "my-saas", Channel: "deploys", Event: "x", Parser: "text"})
	wantCode(t, err, tidings.EChannelNotFound)

	must(t, f.s.SetAutoCreateChannels(ctx, f.account.ID, "my-saas", true))
	f.publish(t, tidings.NewEvent{Channel: "deploys", Event: "Deployed"})
	cs, err := f.s.ListChannels(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(cs) != 2 {
		t.Fatalf("channel not created on first event: %v", cs)
	}
}

func testEventQueries(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	f.publish(t, tidings.NewEvent{Event: "Paid", Description: "Invoice 100%_done",
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}, {Key: "country", Kind: tidings.KindString, Value: "de"}}})
	f.publish(t, tidings.NewEvent{Event: "Paid", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "basic"}}})
	f.publish(t, tidings.NewEvent{Channel: "deploys", Event: "Deploy failed",
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})

	count := func(q tidings.EventQuery) int {
		t.Helper()
		q.Project, q.Limit = "my-saas", 100
		p, err := f.s.ListEvents(ctx, f.account.ID, q)
		must(t, err)
		return len(p.Events)
	}
	premium := tidings.Tag{Key: "plan", Value: "premium"}
	search := func(text string) tidings.EventQuery {
		s, err := tidings.ParseSearch(text, time.Now())
		must(t, err)
		var q tidings.EventQuery
		q.AddSearch(s)
		return q
	}
	for name, c := range map[string]struct {
		q    tidings.EventQuery
		want int
	}{
		"all":                {tidings.EventQuery{}, 3},
		"channel":            {tidings.EventQuery{Channel: "deploys"}, 1},
		"tag":                {tidings.EventQuery{Tags: []tidings.Tag{premium}}, 2},
		"two tags":           {tidings.EventQuery{Tags: []tidings.Tag{premium, {Key: "country", Value: "de"}}}, 1},
		"tag and channel":    {tidings.EventQuery{Channel: "payments", Tags: []tidings.Tag{premium}}, 1},
		"text in name":       {search("FAILED"), 1},
		"text in descr":      {search("invoice"), 1},
		"like chars literal": {search("100%_"), 1},
		"like wildcard":      {search("1%e"), 0},
		"tag value":          {search("basic"), 1},
		"prefix":             {search("depl*"), 1},
		"phrase":             {search(`"deploy failed"`), 1},
		"phrase, reversed":   {search(`"failed deploy"`), 0},
		"word and tag":       {search("paid plan:premium"), 1},
		"word in channel":    {tidings.EventQuery{Channel: "deploys", Terms: search("paid").Terms}, 0},
	} {
		if got := count(c.q); got != c.want {
			t.Errorf("%s: %d events, want %d", name, got, c.want)
		}
	}
	_, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Channel: "nope", Limit: 1})
	wantCode(t, err, tidings.EChannelNotFound)
	_, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Before: "nope", Limit: 1})
	wantCode(t, err, tidings.EValidation)
}

// testPagination walks the pages while new events keep arriving: every event that
// existed before the walk is seen exactly once, in order.
func testPagination(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	const n = 25
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		// Half share one timestamp, so ordering must fall back on the ID.
		ts := epoch.Add(time.Duration(i/2) * time.Second)
		ev := f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("e%d", i), Timestamp: ts})
		want[ev.ID] = true
	}
	seen := map[string]bool{}
	before := ""
	var last *tidings.Event
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("pagination does not end")
		}
		p, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Before: before, Limit: 4})
		must(t, err)
		f.publish(t, tidings.NewEvent{Event: "arrives during the walk"})
		for _, ev := range p.Events {
			if seen[ev.ID] {
				t.Fatalf("event %s seen twice", ev.ID)
			}
			seen[ev.ID] = true
			if last != nil && (ev.Timestamp.After(last.Timestamp) || ev.Timestamp.Equal(last.Timestamp) && ev.ID > last.ID) {
				t.Fatalf("out of order: %v after %v", ev, last)
			}
			last = ev
		}
		if p.Next == "" {
			break
		}
		before = p.Next
	}
	for id := range want {
		if !seen[id] {
			t.Fatalf("event %s missed", id)
		}
	}
}

func testTenancy(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	b := newAccount(t, f.s, "globex") // also has my-saas/payments
	f.publish(t, tidings.NewEvent{Event: "acme secret"})
	p, err := f.s.ListEvents(ctx, b.ID, tidings.EventQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	if len(p.Events) != 0 {
		t.Fatalf("account globex sees acme's events: %+v", p.Events[0])
	}
	secret, _ := tidings.ParseSearch("secret", time.Now())
	p, err = f.s.ListEvents(ctx, b.ID, tidings.EventQuery{Project: "my-saas", Terms: secret.Terms, Limit: 10})
	must(t, err)
	if len(p.Events) != 0 {
		t.Fatalf("account globex finds acme's events by search: %+v", p.Events[0])
	}
	_, err = f.s.ApplyInsight(ctx, f.account.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue",
		Value: "5", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
	must(t, err)
	ins, err := f.s.ListInsights(ctx, b.ID, "my-saas")
	must(t, err)
	if len(ins) != 0 {
		t.Fatalf("account globex sees acme's insights: %+v", ins[0])
	}
	_, err = f.s.ListEvents(ctx, b.ID, tidings.EventQuery{Project: "only-acme", Limit: 1})
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.CreateProject(ctx, f.account.ID, "only-acme")
	must(t, err)
	_, err = f.s.PublishEvent(ctx, b.ID, &tidings.NewEvent{Project: "only-acme", Channel: "payments", Event: "x", Parser: "text"})
	wantCode(t, err, tidings.EProjectNotFound)
}

// testBatchIsolation publishes good and bad events at once, so that they share batches:
// the bad ones fail alone and every good one is stored.
func testBatchIsolation(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ch := "payments"
			if i%3 == 0 {
				ch = "missing"
			}
			_, errs[i] = f.s.PublishEvent(ctx, f.account.ID,
				&tidings.NewEvent{Project: "my-saas", Channel: ch, Event: fmt.Sprint(i), Parser: "text"})
		}(i)
	}
	wg.Wait()
	good := 0
	for i, err := range errs {
		if i%3 == 0 {
			wantCode(t, err, tidings.EChannelNotFound)
		} else {
			must(t, err)
			good++
		}
	}
	total := 0
	before := ""
	for {
		p, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Before: before, Limit: 100})
		must(t, err)
		total += len(p.Events)
		if p.Next == "" {
			break
		}
		before = p.Next
	}
	if total != good {
		t.Fatalf("stored %d events, want %d", total, good)
	}
}

// testFilteredPagination pages through tag filters read from either side — a common
// tag in a rare channel (read from the channel), a rare tag in a busy channel (read
// from the tag) — with timestamps shared by pairs of events, and checks the filters
// after a channel and its events are deleted.
func testFilteredPagination(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "rare")
	must(t, err)
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	pro, user, only := str("plan", "pro"), str("user", "u1"), str("only", "rare")
	want := map[string][]string{} // query name → IDs, newest first
	var all []*tidings.Event
	for i := range 30 {
		tags := tidings.Tags{pro}
		if i == 7 || i == 21 {
			tags = append(tags, user)
		}
		ev := f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("busy %d", i), Tags: tags,
			Timestamp: epoch.Add(time.Duration(i/2) * time.Second)})
		all = append(all, ev)
	}
	for i := range 6 {
		tags := tidings.Tags{pro, only}
		if i == 2 { // the rare tag in both channels: the channel must still be checked
			tags = append(tags, user)
		}
		ev := f.publish(t, tidings.NewEvent{Channel: "rare", Event: fmt.Sprintf("rare %d", i), Tags: tags,
			Timestamp: epoch.Add(time.Duration(i/2)*time.Second + 500*time.Millisecond)})
		all = append(all, ev)
	}
	newestFirst := func(keep func(*tidings.Event) bool) []string {
		var evs []*tidings.Event
		for _, ev := range all {
			if keep(ev) {
				evs = append(evs, ev)
			}
		}
		slices.SortFunc(evs, func(a, b *tidings.Event) int {
			if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		var ids []string
		for _, ev := range evs {
			ids = append(ids, ev.ID)
		}
		return ids
	}
	has := func(ev *tidings.Event, tag tidings.Tag) bool {
		return slices.ContainsFunc(ev.Tags, func(t tidings.Tag) bool { return t.Key == tag.Key && t.Value == tag.Value })
	}
	walk := func(q tidings.EventQuery, limit int) []string {
		t.Helper()
		var ids []string
		q.Project, q.Limit = "my-saas", limit
		for pages := 0; ; pages++ {
			if pages > 40 {
				t.Fatal("pagination does not end")
			}
			p, err := f.s.ListEvents(ctx, f.account.ID, q)
			must(t, err)
			for _, ev := range p.Events {
				ids = append(ids, ev.ID)
			}
			if p.Next == "" {
				return ids
			}
			q.Before = p.Next
		}
	}
	want["common tag, rare channel"] = newestFirst(func(ev *tidings.Event) bool { return ev.Channel == "rare" })
	want["rare tag, busy channel"] = newestFirst(func(ev *tidings.Event) bool { return has(ev, user) && ev.Channel == "payments" })
	want["common tag"] = newestFirst(func(ev *tidings.Event) bool { return true })
	want["two tags"] = newestFirst(func(ev *tidings.Event) bool { return has(ev, only) })
	for name, q := range map[string]tidings.EventQuery{
		"common tag, rare channel": {Channel: "rare", Tags: []tidings.Tag{pro}},
		"rare tag, busy channel":   {Channel: "payments", Tags: []tidings.Tag{pro, user}},
		"common tag":               {Tags: []tidings.Tag{pro}},
		"two tags":                 {Tags: []tidings.Tag{pro, only}},
	} {
		for _, limit := range []int{1, 4} {
			if got := walk(q, limit); !slices.Equal(got, want[name]) {
				t.Errorf("%s, pages of %d: %d events %v, want %d %v", name, limit, len(got), got, len(want[name]), want[name])
			}
		}
	}
	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "rare"))
	if got := walk(tidings.EventQuery{Tags: []tidings.Tag{pro}}, 7); len(got) != 30 {
		t.Errorf("after deleting the rare channel, plan=pro has %d events, want 30", len(got))
	}
	if got := walk(tidings.EventQuery{Tags: []tidings.Tag{only}}, 7); len(got) != 0 {
		t.Errorf("after deleting the rare channel, only=rare has %d events, want 0", len(got))
	}
	if got := walk(tidings.EventQuery{Channel: "payments", Tags: []tidings.Tag{pro, user}}, 7); len(got) != 2 {
		t.Errorf("after deleting the rare channel, user=u1 has %d events, want 2", len(got))
	}
}

// testSearch: words, prefixes, phrases, accents and case, tag values, combined with
// tags, a channel and a time range; pages of a search; deleted events leave it.
func testSearch(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	day := func(d int) time.Time { return epoch.Add(time.Duration(d) * 24 * time.Hour) }
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	zurich := f.publish(t, tidings.NewEvent{Event: "Payment failed", Description: "Card of **Zoë** declined in Zürich",
		Tags: tidings.Tags{str("plan", "pro"), str("order", "ORD-7731")}, Timestamp: day(1)})
	subscr := f.publish(t, tidings.NewEvent{Event: "New subscription", Description: "Ada subscribed to the yearly plan",
		Tags: tidings.Tags{str("plan", "basic")}, Timestamp: day(2)})
	deploy := f.publish(t, tidings.NewEvent{Channel: "deploys", Event: "Deploy failed", Description: "build 42 — payment service",
		Timestamp: day(3)})
	cafe := f.publish(t, tidings.NewEvent{Event: "Café opened", Description: "Straße der Pariser Kommune", Timestamp: day(4)})
	search := func(q, channel string) []string {
		t.Helper()
		s, err := tidings.ParseSearch(q, day(5))
		must(t, err)
		eq := tidings.EventQuery{Project: "my-saas", Channel: channel, Limit: 100}
		eq.AddSearch(s)
		p, err := f.s.ListEvents(ctx, f.account.ID, eq)
		must(t, err)
		var ids []string
		for _, ev := range p.Events {
			ids = append(ids, ev.ID)
		}
		return ids
	}
	for _, c := range []struct {
		q, channel string
		want       []*tidings.Event
	}{
		{"zurich", "", []*tidings.Event{zurich}},
		{"ZÜRICH", "", []*tidings.Event{zurich}},
		{"zoe", "", []*tidings.Event{zurich}},
		{"cafe", "", []*tidings.Event{cafe}},
		{"straße", "", []*tidings.Event{cafe}},
		{"subscr*", "", []*tidings.Event{subscr}},
		{"pay*", "", []*tidings.Event{deploy, zurich}},
		{"failed", "", []*tidings.Event{deploy, zurich}},
		{`"payment failed"`, "", []*tidings.Event{zurich}},
		{`"failed payment"`, "", nil},
		{"payment failed", "", []*tidings.Event{deploy, zurich}}, // both words, anywhere
		{"7731", "", []*tidings.Event{zurich}},                   // a tag's value
		{"failed plan:pro", "", []*tidings.Event{zurich}},
		{"failed plan:basic", "", nil},
		{"failed", "deploys", []*tidings.Event{deploy}},
		{"failed since:3d", "", []*tidings.Event{deploy}},          // day(5) minus 3 days is day(2)
		{"failed before:2026-11-24", "", []*tidings.Event{zurich}}, // epoch is 2026-11-22 05:00 UTC
		{"failed after:2026-11-25", "", []*tidings.Event{deploy}},
		{"refund", "", nil},
		{"since:2d", "", []*tidings.Event{cafe, deploy}}, // a range alone reads the feed
	} {
		var want []string
		for _, ev := range c.want {
			want = append(want, ev.ID)
		}
		if got := search(c.q, c.channel); !slices.Equal(got, want) {
			t.Errorf("search %q in %q: %v, want %v", c.q, c.channel, got, want)
		}
	}
	// Word searches list as the feed does, newest first by timestamp: a backfilled event
	// (an old timestamp) sent last comes last.
	payout := f.publish(t, tidings.NewEvent{Event: "Payout archived", Timestamp: day(-10)})
	if got, want := search("pay*", ""), []string{deploy.ID, zurich.ID, payout.ID}; !slices.Equal(got, want) {
		t.Errorf("pay* with a backfilled event: %v, want %v", got, want)
	}
	// Pages of a search: each match once.
	var many []string
	for i := range 7 {
		many = append(many, f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("Signup %d", i), Description: "welcome aboard"}).ID)
	}
	s, _ := tidings.ParseSearch("welcome", time.Now())
	seen := map[string]bool{}
	q := tidings.EventQuery{Project: "my-saas", Terms: s.Terms, Limit: 3}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("search pages do not end")
		}
		p, err := f.s.ListEvents(ctx, f.account.ID, q)
		must(t, err)
		for _, ev := range p.Events {
			if seen[ev.ID] {
				t.Fatalf("event %s on two pages", ev.ID)
			}
			seen[ev.ID] = true
		}
		if p.Next == "" {
			break
		}
		q.Before = p.Next
	}
	if len(seen) != len(many) {
		t.Errorf("search pages held %d events, want %d", len(seen), len(many))
	}
	// A deleted channel's events leave the search.
	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "deploys"))
	if got := search("failed", ""); !slices.Equal(got, []string{zurich.ID}) {
		t.Errorf("after deleting deploys, failed finds %v", got)
	}
}

// testDeleteOne deletes one event and one insight: each leaves every read — pages, tag
// filters, search, counts — and neither can be reached from another account.
func testDeleteOne(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	keep := f.publish(t, tidings.NewEvent{Event: "Refund issued", Tags: tidings.Tags{str("plan", "pro")}})
	gone := f.publish(t, tidings.NewEvent{Event: "Refund failed", Tags: tidings.Tags{str("plan", "pro"), str("order", "o-1")}})
	wantCode(t, f.s.DeleteEvent(ctx, other.ID, "my-saas", gone.ID), tidings.ENotFound)
	must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", gone.ID))
	wantCode(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", gone.ID), tidings.ENotFound)
	wantCode(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", "not-an-id"), tidings.ENotFound)
	wantCode(t, f.s.DeleteEvent(ctx, f.account.ID, "nope", keep.ID), tidings.EProjectNotFound)
	_, err := f.s.FindEvent(ctx, f.account.ID, "my-saas", gone.ID)
	wantCode(t, err, tidings.ENotFound)
	list := func(q tidings.EventQuery) []string {
		t.Helper()
		q.Project, q.Limit = "my-saas", 10
		p, err := f.s.ListEvents(ctx, f.account.ID, q)
		must(t, err)
		var ids []string
		for _, ev := range p.Events {
			ids = append(ids, ev.ID)
		}
		return ids
	}
	refund, _ := tidings.ParseSearch("refund", time.Now())
	for name, q := range map[string]tidings.EventQuery{
		"feed":   {},
		"tag":    {Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}},
		"search": {Terms: refund.Terms},
	} {
		if got := list(q); !slices.Equal(got, []string{keep.ID}) {
			t.Errorf("%s after the delete: %v, want only %s", name, got, keep.ID)
		}
	}
	if got := list(tidings.EventQuery{Tags: []tidings.Tag{{Key: "order", Value: "o-1"}}}); len(got) != 0 {
		t.Errorf("the deleted event's own tag still finds %v", got)
	}
	if n, err := f.s.CountEvents(ctx, f.account.ID, "my-saas", ""); err != nil || n != 1 {
		t.Errorf("count after the delete: %d %v", n, err)
	}
	counts, err := f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "", keep.Timestamp.Truncate(time.Hour).Add(-24*time.Hour), time.Hour)
	must(t, err)
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != 1 {
		t.Errorf("hourly counts after the delete: %d events, want 1", total)
	}

	for _, v := range []string{"5", "7"} {
		_, err := f.s.ApplyInsight(ctx, f.account.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue",
			Value: v, ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
		must(t, err)
	}
	wantCode(t, f.s.DeleteInsight(ctx, other.ID, "my-saas", "Revenue"), tidings.ENotFound)
	must(t, f.s.DeleteInsight(ctx, f.account.ID, "my-saas", "Revenue"))
	wantCode(t, f.s.DeleteInsight(ctx, f.account.ID, "my-saas", "Revenue"), tidings.ENotFound)
	if ins, _ := f.s.ListInsights(ctx, f.account.ID, "my-saas"); len(ins) != 0 {
		t.Errorf("insights after the delete: %+v", ins)
	}
	// The same title starts a new history.
	_, err = f.s.ApplyInsight(ctx, f.account.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue",
		Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
	must(t, err)
	if h, err := f.s.InsightHistory(ctx, f.account.ID, "my-saas", "Revenue", 10); err != nil || len(h) != 1 {
		t.Errorf("history of a re-created insight: %+v %v", h, err)
	}
}

// testRetention: a project that keeps events for 7 days loses the older ones to
// PurgeExpired, in batches of at most max, with its counts, tag filters and search
// kept right; a project kept forever, and another account's, lose nothing.
func testRetention(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	now := time.Now().UTC()
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	var recent []string
	for i := range 25 {
		age := time.Duration(i) * 12 * time.Hour // 0 to 12 days old
		ev := f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("Paid %d", i), Timestamp: now.Add(-age), UserID: "buyer",
			Tags: tidings.Tags{str("plan", []string{"free", "pro"}[i%2])}})
		if age <= 7*24*time.Hour { // exactly 7 days old is still kept
			recent = append(recent, ev.ID)
		}
		if _, err := f.s.PublishEvent(ctx, other.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Theirs", Parser: tidings.ParserText, Timestamp: now.Add(-age)}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 7))
	wantCode(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 8), tidings.EValidation)
	wantCode(t, f.s.SetRetention(ctx, f.account.ID, "nope", 7), tidings.EProjectNotFound)
	if p, _ := f.s.FindProject(ctx, f.account.ID, "my-saas"); p.RetentionDays != 7 {
		t.Fatalf("retention = %d", p.RetentionDays)
	}
	total := 0
	for round := 0; ; round++ {
		n, err := f.s.PurgeExpired(ctx, now, 4)
		must(t, err)
		if n > 4 {
			t.Fatalf("a purge of at most 4 deleted %d", n)
		}
		total += n
		if n == 0 {
			break
		}
		if round > 20 {
			t.Fatal("the purge does not end")
		}
	}
	if total != 25-len(recent) {
		t.Fatalf("purged %d events, want %d", total, 25-len(recent))
	}
	p, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Limit: 100})
	must(t, err)
	var ids []string
	for _, ev := range p.Events {
		ids = append(ids, ev.ID)
	}
	if !slices.Equal(ids, recent) {
		t.Fatalf("kept %v, want %v", ids, recent)
	}
	if n, _ := f.s.CountEvents(ctx, f.account.ID, "my-saas", ""); n != len(recent) {
		t.Fatalf("count after the purge: %d, want %d", n, len(recent))
	}
	pro, _ := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, Limit: 100})
	paid, _ := tidings.ParseSearch("paid", now)
	found, _ := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Terms: paid.Terms, Limit: 100})
	if len(pro.Events) != len(recent)/2 || len(found.Events) != len(recent) {
		t.Fatalf("after the purge: plan:pro finds %d, paid finds %d; %d are kept", len(pro.Events), len(found.Events), len(recent))
	}
	if u, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "buyer"); err != nil || u.Events != int64(len(recent)) {
		t.Fatalf("the user's events after the purge: %+v %v, want %d", u, err, len(recent))
	}
	if n, _ := f.s.CountEvents(ctx, other.ID, "my-saas", ""); n != 25 {
		t.Fatalf("the other account kept %d of 25 events", n)
	}
}
