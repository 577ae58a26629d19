package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

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
