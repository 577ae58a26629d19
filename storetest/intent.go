package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// The intent of events (issue 38): priority, url, actions, key and acknowledgement,
// through every read; the IntentStore; Delivery.Ref; urgent-only prefs; escalation
// settings.

// intentEvent is an event with every intent field at work.
func intentEvent(name string) tidings.NewEvent {
	return tidings.NewEvent{Event: name, Priority: "urgent", URL: "https://ci.example/run/7?x=1&y=ü",
		Actions:   []tidings.Action{{Label: "Open PR", URL: "https://git.example/pr/1"}, {Label: "Approve", ID: "approve"}, {Label: "Rollback ⏪", ID: "rollback"}},
		ThreadKey: "deploy-1432", Tags: tidings.Tags{{Key: "env", Kind: tidings.KindString, Value: "prod"}}}
}

// sameIntent fails unless got carries want's intent fields.
func sameIntent(t *testing.T, where string, got, want *tidings.Event) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no event", where)
	}
	if got.ID != want.ID || got.Priority != want.Priority || got.URL != want.URL || got.ThreadKey != want.ThreadKey ||
		!reflect.DeepEqual(got.Actions, want.Actions) || !reflect.DeepEqual(got.Ack, want.Ack) {
		t.Fatalf("%s: read %s priority %v url %q actions %+v key %q ack %+v,\nwant %s priority %v url %q actions %+v key %q ack %+v",
			where, got.ID, got.Priority, got.URL, got.Actions, got.ThreadKey, got.Ack,
			want.ID, want.Priority, want.URL, want.Actions, want.ThreadKey, want.Ack)
	}
}

// readEverywhere reads ev through every read of an event and checks its intent fields.
func readEverywhere(t *testing.T, f fixture, want *tidings.Event) {
	t.Helper()
	ctx := context.Background()
	got, err := f.s.FindEvent(ctx, f.account.ID, want.Project, want.ID)
	must(t, err)
	sameIntent(t, "FindEvent", got, want)
	got, err = f.s.FindEventByID(ctx, f.account.ID, want.ID)
	must(t, err)
	sameIntent(t, "FindEventByID", got, want)
	find := func(where string, evs []*tidings.Event) {
		t.Helper()
		for _, ev := range evs {
			if ev.ID == want.ID {
				sameIntent(t, where, ev, want)
				return
			}
		}
		t.Fatalf("%s: event %s not read", where, want.ID)
	}
	page, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: want.Project, Limit: 100})
	must(t, err)
	find("ListEvents", page.Events)
	page, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: want.Project, Channel: want.Channel,
		Tags: want.Tags, Limit: 100})
	must(t, err)
	find("ListEvents by channel and tag", page.Events)
	page, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: want.Project,
		Terms: []tidings.Term{{Words: tidings.SearchWords(want.Event)}}, Limit: 100})
	must(t, err)
	find("ListEvents with words", page.Events)
	after, err := f.s.EventsAfter(ctx, f.account.ID, want.Project, tidings.EventIDFloor(want.CreatedAt.Add(-time.Hour)), 100)
	must(t, err)
	find("EventsAfter", after)
	var scanned []*tidings.Event
	must(t, f.s.ScanEvents(ctx, f.account.ID, tidings.EventQuery{Project: want.Project}, 1000, func(ev *tidings.Event) error {
		scanned = append(scanned, ev)
		return nil
	}))
	find("ScanEvents", scanned)
	if want.ThreadKey != "" {
		vs, _, err := f.s.Versions(ctx, f.account.ID, want.Project, tidings.Thread{Channel: want.Channel, Key: want.ThreadKey}, 100)
		must(t, err)
		find("Versions", vs)
	}
}

// testIntentFields: every intent field is stored by each write path and read back by
// every read; an event without them reads as default priority with none.
func testIntentFields(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	one := f.publish(t, intentEvent("Deploy one"))
	if one.Priority != tidings.PriorityUrgent || len(one.Actions) != 3 || one.ThreadKey != "deploy-1432" || one.Ack != nil {
		t.Fatalf("published %+v", one)
	}
	readEverywhere(t, f, one)

	plain := f.publish(t, tidings.NewEvent{Event: "Plain one"})
	if plain.Priority != tidings.PriorityDefault || plain.URL != "" || plain.Actions != nil || plain.ThreadKey != "" {
		t.Fatalf("published without intent: %+v", plain)
	}
	readEverywhere(t, f, plain)

	// A batch: each event its own fields.
	low := intentEvent("Batch low")
	low.Priority, low.Actions, low.URL, low.ThreadKey = "2", nil, "", "other-key"
	b := &tidings.NewBatch{}
	for _, e := range []tidings.NewEvent{intentEvent("Batch urgent"), low, {Event: "Batch plain"}} {
		e.Project, e.Channel, e.Parser = "my-saas", "payments", tidings.ParserText
		b.Events = append(b.Events, &e)
	}
	pub, err := f.s.PublishEvents(ctx, f.account.ID, b)
	must(t, err)
	for i, p := range pub {
		must(t, p.Err)
		readEverywhere(t, f, p.Event)
		if want := []tidings.Priority{tidings.PriorityUrgent, tidings.PriorityLow, tidings.PriorityDefault}[i]; p.Event.Priority != want {
			t.Fatalf("batch event %d: priority %v, want %v", i, p.Event.Priority, want)
		}
	}

	// Acknowledged, it reads with its ack everywhere.
	at := time.Date(2026, 11, 25, 6, 7, 8, 9_000_000, time.UTC)
	acked, first, err := f.s.AcknowledgeEvent(ctx, f.account.ID, one.ID, "ada@x.io", at)
	must(t, err)
	if !first || acked.Ack == nil || acked.Ack.By != "ada@x.io" || !acked.Ack.At.Equal(at) {
		t.Fatalf("AcknowledgeEvent = %+v, first %v", acked.Ack, first)
	}
	one.Ack = &tidings.Ack{By: "ada@x.io", At: at}
	readEverywhere(t, f, one)
}

// testVersions: the events of one key in one channel, newest first, with their count;
// another channel's events of the key are another thing.
func testVersions(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	var ids []string
	for i := range 4 {
		e := tidings.NewEvent{Event: fmt.Sprintf("v%d", i), ThreadKey: "order-981"}
		if i == 2 {
			e.Channel = "deploys" // same key, other channel
		}
		// Timestamps go backwards: versions are ordered by acceptance, not timestamp.
		e.Timestamp = epoch.Add(-time.Duration(i) * time.Minute)
		ev := f.publish(t, e)
		if i != 2 {
			ids = append(ids, ev.ID)
		}
	}
	f.publish(t, tidings.NewEvent{Event: "no key"})
	f.publish(t, tidings.NewEvent{Event: "other key", ThreadKey: "order-982"})
	th := tidings.Thread{Channel: "payments", Key: "order-981"}
	vs, n, err := f.s.Versions(ctx, f.account.ID, "my-saas", th, 10)
	must(t, err)
	slices.Reverse(ids)
	if n != 3 || !slices.Equal(eventIDs(vs), ids) {
		t.Fatalf("Versions = %v (%d), want %v (3)", eventIDs(vs), n, ids)
	}
	vs, n, err = f.s.Versions(ctx, f.account.ID, "my-saas", th, 1)
	must(t, err)
	if n != 3 || len(vs) != 1 || vs[0].ID != ids[0] {
		t.Fatalf("Versions limit 1 = %v (%d), want [%s] (3)", eventIDs(vs), n, ids[0])
	}
	vs, n, err = f.s.Versions(ctx, f.account.ID, "my-saas", tidings.Thread{Channel: "deploys", Key: "order-981"}, 10)
	must(t, err)
	if n != 1 || len(vs) != 1 || vs[0].Channel != "deploys" {
		t.Fatalf("Versions of the other channel = %v (%d)", eventIDs(vs), n)
	}
	for _, th := range []tidings.Thread{{Channel: "payments", Key: "nope"}, {Channel: "nope", Key: "order-981"}, {Channel: "payments"}} {
		vs, n, err := f.s.Versions(ctx, f.account.ID, "my-saas", th, 10)
		must(t, err)
		if n != 0 || len(vs) != 0 {
			t.Fatalf("Versions of %+v = %v (%d), want none", th, eventIDs(vs), n)
		}
	}
	_, _, err = f.s.Versions(ctx, f.account.ID, "nope", th, 10)
	wantCode(t, err, tidings.EProjectNotFound)
	// Another account's project of the same name holds none of them.
	other := newAccount(t, f.s, "globex")
	vs, n, err = f.s.Versions(ctx, other.ID, "my-saas", th, 10)
	must(t, err)
	if n != 0 || len(vs) != 0 {
		t.Fatalf("another account's Versions = %v (%d), want none", eventIDs(vs), n)
	}
}

func eventIDs(evs []*tidings.Event) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.ID)
	}
	return out
}

// testPriorityFilters: priority bounds keep exactly the events of those priorities, in
// the feed's order across pages, alone and with a channel, a tag, words, an event name
// and a time range, in the feed, a search and a chart's scan; bounds that cross keep
// nothing.
func testPriorityFilters(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	prios := []string{"default", "3", "default", "urgent", "high", "min", "low", "", "5", "default", "4"}
	for i := range 70 {
		e := tidings.NewEvent{Event: []string{"alpha run", "beta run"}[i%2], Priority: prios[i%len(prios)],
			Channel: []string{"payments", "deploys", "payments"}[i%3], Timestamp: epoch.Add(time.Duration(i%17) * time.Minute)}
		if i%4 == 0 {
			e.Tags = tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}
		}
		f.publish(t, e)
	}
	all := map[string]*tidings.Event{}
	var order []string // the feed's order, unfiltered
	q := tidings.EventQuery{Project: "my-saas", Limit: 100}
	page, err := f.s.ListEvents(ctx, f.account.ID, q)
	must(t, err)
	for _, ev := range page.Events {
		all[ev.ID] = ev
		order = append(order, ev.ID)
	}
	if len(order) != 70 {
		t.Fatalf("%d events listed, want 70", len(order))
	}
	since := epoch.Add(5 * time.Minute)
	filters := map[string]tidings.EventQuery{
		"alone":      {},
		"channel":    {Channel: "deploys"},
		"tag":        {Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}},
		"words":      {Terms: []tidings.Term{{Words: []string{"alpha"}}}},
		"event name": {Event: "beta run"},
		"since":      {Since: since},
		"channel, tag and words": {Channel: "payments", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}},
			Terms: []tidings.Term{{Words: []string{"alpha"}}}},
	}
	ranges := map[string][2]tidings.Priority{
		"urgent": {5, 5}, ">=high": {4, 5}, "<=low": {1, 2}, "min": {1, 1}, ">=default": {3, 0}, "default": {3, 3},
		"<high": {0, 3}, "none": {5, 4},
	}
	for fname, fq := range filters {
		for rname, r := range ranges {
			q := fq
			q.MinPriority, q.MaxPriority = r[0], r[1]
			var want []string
			for _, id := range order {
				ev := all[id]
				if q.Matches(ev) && q.PriorityMatches(ev.Priority) && (q.Since.IsZero() || !ev.Timestamp.Before(q.Since)) &&
					(len(q.Terms) == 0 || tidings.TermIn(tidings.SearchWords(ev.SearchText()), q.Terms[0])) {
					want = append(want, id)
				}
			}
			got := walkPages(t, f, q, 4)
			if !slices.Equal(got, want) {
				t.Errorf("%s, priority %s: feed %d events %v,\nwant %d %v", fname, rname, len(got), got, len(want), want)
			}
			q.Project = "my-saas"
			var scanned []string
			must(t, f.s.ScanEvents(ctx, f.account.ID, q, 1000, func(ev *tidings.Event) error {
				scanned = append(scanned, ev.ID)
				return nil
			}))
			slices.SortFunc(scanned, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
			if !slices.Equal(scanned, want) {
				t.Errorf("%s, priority %s: ScanEvents %d events, want %d", fname, rname, len(scanned), len(want))
			}
		}
	}
	// A search's priority: filter is the query's bounds.
	s, err := tidings.ParseSearch("priority:>=high alpha", epoch)
	must(t, err)
	q = tidings.EventQuery{Project: "my-saas", Limit: 100}
	if !q.AddSearch(s) {
		t.Fatal("AddSearch refused priority:>=high")
	}
	page, err = f.s.ListEvents(ctx, f.account.ID, q)
	must(t, err)
	if len(page.Events) == 0 {
		t.Fatal("priority:>=high alpha found nothing")
	}
	for _, ev := range page.Events {
		if ev.Priority < tidings.PriorityHigh || ev.Event != "alpha run" {
			t.Fatalf("priority:>=high alpha listed %s %v", ev.Event, ev.Priority)
		}
	}
}

// walkPages lists every event of q in my-saas, limit a page.
func walkPages(t *testing.T, f fixture, q tidings.EventQuery, limit int) []string {
	t.Helper()
	q.Project, q.Limit = "my-saas", limit
	ids := []string{}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("pages do not end")
		}
		p, err := f.s.ListEvents(context.Background(), f.account.ID, q)
		must(t, err)
		ids = append(ids, eventIDs(p.Events)...)
		if p.Next == "" {
			return ids
		}
		q.Before = p.Next
	}
}
