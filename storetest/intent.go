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

// jobsOf claims every job due by an hour from now of the kinds (all when none), and
// returns them by message ID. Claiming leases them: call it once per check.
func jobsOf(t *testing.T, f fixture, kinds ...string) map[string]*tidings.Delivery {
	t.Helper()
	ds, err := f.s.ClaimDeliveries(context.Background(), time.Now().Add(time.Hour), time.Minute, 1000, kinds...)
	must(t, err)
	out := map[string]*tidings.Delivery{}
	for _, d := range ds {
		out[d.MessageID] = d
	}
	return out
}

// testAcknowledge: the first acknowledgement wins; in its transaction the event's
// pending repeats and pushes go and one DeliverAck job comes; a second changes
// nothing; another account's event, or none, is ENotFound.
func testAcknowledge(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	ev := f.publish(t, intentEvent("Disk full"))
	other := f.publish(t, intentEvent("CPU hot"))
	now := time.Now()
	for _, d := range []*tidings.Delivery{
		{Kind: tidings.DeliverRepeat, EventID: ev.ID, MessageID: "repeat-" + ev.ID + "-1", Count: 1},
		{Kind: tidings.DeliverPush, EventID: ev.ID, Target: "dev_1", MessageID: "push-" + ev.ID + "-dev_1"},
		{Kind: tidings.DeliverWebhook, EventID: ev.ID, Target: "wh_1", MessageID: "wh-" + ev.ID},
		{Kind: tidings.DeliverRepeat, EventID: other.ID, MessageID: "repeat-" + other.ID + "-1", Count: 1},
	} {
		d.AccountID, d.NextAt = f.account.ID, now
		must(t, f.s.EnqueueDelivery(ctx, d))
	}
	stranger := newAccount(t, f.s, "globex")
	_, _, err := f.s.AcknowledgeEvent(ctx, stranger.ID, ev.ID, "eve@y.io", now)
	wantCode(t, err, tidings.ENotFound)
	for _, id := range []string{"nope", "0194f0e6-0000-7000-8000-000000000000"} {
		_, _, err = f.s.AcknowledgeEvent(ctx, f.account.ID, id, "ada@x.io", now)
		wantCode(t, err, tidings.ENotFound)
	}

	at := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	got, first, err := f.s.AcknowledgeEvent(ctx, f.account.ID, ev.ID, "ada@x.io", at)
	must(t, err)
	if !first || got.ID != ev.ID || got.Ack == nil || got.Ack.By != "ada@x.io" || !got.Ack.At.Equal(at) || got.AsksForAck() {
		t.Fatalf("first acknowledgement: %+v first %v", got.Ack, first)
	}
	again, first, err := f.s.AcknowledgeEvent(ctx, f.account.ID, ev.ID, "bob@x.io", at.Add(time.Minute))
	must(t, err)
	if first || again.Ack == nil || again.Ack.By != "ada@x.io" || !again.Ack.At.Equal(at) {
		t.Fatalf("second acknowledgement: %+v first %v, want ada's", again.Ack, first)
	}
	jobs := jobsOf(t, f)
	if len(jobs) != 3 || jobs["repeat-"+other.ID+"-1"] == nil || jobs["wh-"+ev.ID] == nil {
		t.Fatalf("after the acknowledgement the outbox holds %v, want the other event's repeat, the webhook and one ack", keysOfJobs(jobs))
	}
	ack := jobs["ack-"+ev.ID]
	if ack == nil || ack.Kind != tidings.DeliverAck || ack.EventID != ev.ID || ack.AccountID != f.account.ID || !ack.NextAt.Equal(at) {
		t.Fatalf("ack job = %+v", ack)
	}
	if n, _, _ := f.s.PendingDeliveries(ctx); n != 3 {
		t.Fatalf("%d jobs pending, want 3 (the second acknowledgement added none)", n)
	}
}

func keysOfJobs(m map[string]*tidings.Delivery) []string {
	var out []string
	for k, d := range m {
		out = append(out, d.Kind+":"+k)
	}
	slices.Sort(out)
	return out
}

// testAckRacesRepeat: a repeat claimed by a runner and an acknowledgement at the same
// time: whichever commits first, no repeat and no push of the event is left after both.
func testAckRacesRepeat(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	for i := range 8 {
		ev := f.publish(t, intentEvent(fmt.Sprintf("Alert %d", i)))
		must(t, f.s.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverRepeat, AccountID: f.account.ID, EventID: ev.ID,
			MessageID: "repeat-" + ev.ID + "-1", Count: 1, NextAt: time.Now()}))
		claimed := jobsOf(t, f, tidings.DeliverRepeat)
		job := claimed["repeat-"+ev.ID+"-1"]
		if len(claimed) != 1 || job == nil {
			t.Fatalf("claimed %v", keysOfJobs(claimed))
		}
		next := []*tidings.Delivery{
			{Kind: tidings.DeliverPush, AccountID: f.account.ID, EventID: ev.ID, Target: "dev_1", MessageID: fmt.Sprintf("push-%s-r1", ev.ID), NextAt: time.Now()},
			{Kind: tidings.DeliverRepeat, AccountID: f.account.ID, EventID: ev.ID, MessageID: "repeat-" + ev.ID + "-2", Count: 2, NextAt: time.Now()},
		}
		errs := make(chan error, 2)
		go func() { errs <- f.s.ReplaceDelivery(ctx, job.ID, next, nil) }()
		go func() {
			_, _, err := f.s.AcknowledgeEvent(ctx, f.account.ID, ev.ID, "ada@x.io", time.Now())
			errs <- err
		}()
		must(t, <-errs)
		must(t, <-errs)
		left := jobsOf(t, f)
		if len(left) != 1 || left["ack-"+ev.ID] == nil {
			t.Fatalf("round %d: after a repeat raced its acknowledgement the outbox holds %v, want only the ack", i, keysOfJobs(left))
		}
		for _, d := range left {
			must(t, f.s.FinishDelivery(ctx, d.ID))
		}
	}
}

// testPresses: a press of an id action is recorded with the action's label and a
// DeliverPress job naming it; a URL action, an unknown action, another account's
// event are ENotFound; an event keeps its newest MaxPresses presses.
func testPresses(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	ev := f.publish(t, intentEvent("Deploy"))
	plain := f.publish(t, tidings.NewEvent{Event: "No buttons"})
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	p := &tidings.ActionPress{AccountID: f.account.ID, EventID: ev.ID, ActionID: "approve", By: "ada@x.io", Via: "Pixel 8", At: at}
	got, err := f.s.PressAction(ctx, p)
	must(t, err)
	if got.ID != ev.ID || len(got.Actions) != 3 {
		t.Fatalf("PressAction returned %+v", got)
	}
	if len(p.ID) < 7 || p.ID[:6] != "press_" || p.Label != "Approve" {
		t.Fatalf("press = %+v", p)
	}
	found, err := f.s.FindPress(ctx, f.account.ID, p.ID)
	must(t, err)
	if *found != *p {
		t.Fatalf("FindPress = %+v, want %+v", found, p)
	}
	jobs := jobsOf(t, f, tidings.DeliverPress)
	d := jobs["press-"+p.ID]
	if len(jobs) != 1 || d == nil || d.Ref != p.ID || d.EventID != ev.ID || d.AccountID != f.account.ID {
		t.Fatalf("press jobs = %v (%+v)", keysOfJobs(jobs), d)
	}

	stranger := newAccount(t, f.s, "globex")
	for name, bad := range map[string]tidings.ActionPress{
		"a URL action (no id)":   {AccountID: f.account.ID, EventID: ev.ID, ActionID: ""},
		"a URL action's label":   {AccountID: f.account.ID, EventID: ev.ID, ActionID: "Open PR"},
		"no such action":         {AccountID: f.account.ID, EventID: ev.ID, ActionID: "deny"},
		"an event without any":   {AccountID: f.account.ID, EventID: plain.ID, ActionID: "approve"},
		"another account's":      {AccountID: stranger.ID, EventID: ev.ID, ActionID: "approve"},
		"no such event":          {AccountID: f.account.ID, EventID: "0194f0e6-0000-7000-8000-000000000000", ActionID: "approve"},
		"an event id that is no": {AccountID: f.account.ID, EventID: "nope", ActionID: "approve"},
	} {
		_, err := f.s.PressAction(ctx, &bad)
		if tidings.ErrorCode(err) != tidings.ENotFound {
			t.Fatalf("press of %s: %v, want not found", name, err)
		}
	}
	_, err = f.s.FindPress(ctx, stranger.ID, p.ID)
	wantCode(t, err, tidings.ENotFound)
	_, err = f.s.FindPress(ctx, f.account.ID, "press_nope")
	wantCode(t, err, tidings.ENotFound)
	if ps, err := f.s.ListPresses(ctx, stranger.ID, ev.ID); err != nil || len(ps) != 0 {
		t.Fatalf("another account lists %d presses (%v)", len(ps), err)
	}

	// Many presses: the newest MaxPresses stay, oldest first.
	var ids []string
	for i := range tidings.MaxPresses + 4 {
		p := &tidings.ActionPress{AccountID: f.account.ID, EventID: ev.ID, ActionID: []string{"approve", "rollback"}[i%2],
			By: "bob@x.io", Via: "dashboard", At: at.Add(time.Duration(i+1) * time.Second)}
		_, err := f.s.PressAction(ctx, p)
		must(t, err)
		ids = append(ids, p.ID)
	}
	ps, err := f.s.ListPresses(ctx, f.account.ID, ev.ID)
	must(t, err)
	var listed []string
	for _, p := range ps {
		listed = append(listed, p.ID)
	}
	if want := ids[4:]; !slices.Equal(listed, want) {
		t.Fatalf("ListPresses holds %d presses, want the newest %d, oldest first", len(listed), len(want))
	}
	if ps[1].Label != "Rollback ⏪" || ps[1].Via != "dashboard" || ps[1].By != "bob@x.io" {
		t.Fatalf("listed press %+v", ps[1])
	}
	_, err = f.s.FindPress(ctx, f.account.ID, p.ID)
	wantCode(t, err, tidings.ENotFound)
}

// testIntentSettings: Delivery.Ref through EnqueueDelivery, ClaimDeliveries and
// ReplaceDelivery; urgent-only prefs; a project's escalation settings.
func testIntentSettings(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	ev := f.publish(t, intentEvent("Deploy"))
	must(t, f.s.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverPress, AccountID: f.account.ID, EventID: ev.ID,
		MessageID: "press-press_1", Ref: "press_1", NextAt: time.Now()}))
	jobs := jobsOf(t, f, tidings.DeliverPress)
	d := jobs["press-press_1"]
	if d == nil || d.Ref != "press_1" {
		t.Fatalf("claimed %+v, want Ref press_1", d)
	}
	must(t, f.s.ReplaceDelivery(ctx, d.ID, []*tidings.Delivery{{Kind: tidings.DeliverWebhookPress, AccountID: f.account.ID,
		EventID: ev.ID, Target: "wh_1", MessageID: "wh-press_1", Ref: "press_1", NextAt: time.Now()}}, nil))
	jobs = jobsOf(t, f, tidings.DeliverWebhookPress)
	if d := jobs["wh-press_1"]; len(jobs) != 1 || d == nil || d.Ref != "press_1" || d.Target != "wh_1" {
		t.Fatalf("replaced by %v", keysOfJobs(jobs))
	}

	ada := &tidings.User{AccountID: f.account.ID, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserOwner}
	must(t, f.s.CreateUser(ctx, ada))
	prefs, err := f.s.NotifyPrefs(ctx, ada.ID)
	must(t, err)
	if len(prefs.UrgentOnly) != 0 {
		t.Fatalf("new user's urgent-only: %v", prefs.UrgentOnly)
	}
	want := &tidings.NotifyPrefs{Muted: []string{"my-saas/payments"}, UrgentOnly: []string{"my-saas", "my-saas/deploys"}, TimeZone: "UTC"}
	must(t, f.s.SetNotifyPrefs(ctx, ada.ID, want))
	prefs, err = f.s.NotifyPrefs(ctx, ada.ID)
	must(t, err)
	if !reflect.DeepEqual(prefs, want) {
		t.Fatalf("NotifyPrefs = %+v, want %+v", prefs, want)
	}
	all, err := f.s.AccountNotifyPrefs(ctx, f.account.ID)
	must(t, err)
	if !reflect.DeepEqual(all[ada.ID], want) {
		t.Fatalf("AccountNotifyPrefs = %+v, want %+v", all[ada.ID], want)
	}
	must(t, f.s.SetNotifyPrefs(ctx, ada.ID, &tidings.NotifyPrefs{Muted: []string{"x"}}))
	if prefs, _ = f.s.NotifyPrefs(ctx, ada.ID); len(prefs.UrgentOnly) != 0 {
		t.Fatalf("urgent-only not cleared: %v", prefs.UrgentOnly)
	}

	p, err := f.s.FindProject(ctx, f.account.ID, "my-saas")
	must(t, err)
	if p.RepeatUrgentEvery != tidings.RepeatUrgentEvery || p.RepeatUrgentTimes != tidings.RepeatUrgentTimes {
		t.Fatalf("a new project repeats every %v, %d times; want the defaults", p.RepeatUrgentEvery, p.RepeatUrgentTimes)
	}
	made, err := f.s.CreateProject(ctx, f.account.ID, "fresh")
	must(t, err)
	if made.RepeatUrgentEvery != tidings.RepeatUrgentEvery || made.RepeatUrgentTimes != tidings.RepeatUrgentTimes {
		t.Fatalf("CreateProject answers every %v, %d times; want the defaults", made.RepeatUrgentEvery, made.RepeatUrgentTimes)
	}
	must(t, f.s.SetRepeatUrgent(ctx, f.account.ID, "my-saas", 90*time.Second, 0))
	ps, err := f.s.ListProjects(ctx, f.account.ID)
	must(t, err)
	for _, p := range ps {
		if p.Name == "my-saas" && (p.RepeatUrgentEvery != 90*time.Second || p.RepeatUrgentTimes != 0) {
			t.Fatalf("after SetRepeatUrgent(90s, 0): %v, %d", p.RepeatUrgentEvery, p.RepeatUrgentTimes)
		}
		if p.Name == "fresh" && p.RepeatUrgentEvery != tidings.RepeatUrgentEvery {
			t.Fatalf("another project changed: %v", p.RepeatUrgentEvery)
		}
	}
	for _, bad := range []struct {
		every time.Duration
		times int
	}{{59 * time.Second, 3}, {25 * time.Hour, 3}, {time.Minute, -1}, {time.Minute, tidings.MaxRepeatUrgentTimes + 1}} {
		wantCode(t, f.s.SetRepeatUrgent(ctx, f.account.ID, "my-saas", bad.every, bad.times), tidings.EValidation)
	}
	must(t, f.s.SetRepeatUrgent(ctx, f.account.ID, "my-saas", 24*time.Hour, tidings.MaxRepeatUrgentTimes))
	p, _ = f.s.FindProject(ctx, f.account.ID, "my-saas")
	if p.RepeatUrgentEvery != 24*time.Hour || p.RepeatUrgentTimes != tidings.MaxRepeatUrgentTimes {
		t.Fatalf("after SetRepeatUrgent(24h, max): %v, %d", p.RepeatUrgentEvery, p.RepeatUrgentTimes)
	}
	wantCode(t, f.s.SetRepeatUrgent(ctx, f.account.ID, "nope", time.Minute, 1), tidings.EProjectNotFound)
	stranger, err := f.s.CreateAccount(ctx, "globex")
	must(t, err)
	wantCode(t, f.s.SetRepeatUrgent(ctx, stranger.ID, "my-saas", time.Minute, 1), tidings.EProjectNotFound)
}

// testIntentDeletes: deleting an event, its channel or its project takes its presses
// and its acknowledgement's and presses' jobs along.
func testIntentDeletes(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	_, err = f.s.CreateProject(ctx, f.account.ID, "other")
	must(t, err)
	_, err = f.s.CreateChannel(ctx, f.account.ID, "other", "payments")
	must(t, err)
	kept := f.publish(t, intentEvent("kept"))
	byEvent := f.publish(t, intentEvent("event goes"))
	ch := intentEvent("channel goes")
	ch.Channel = "deploys"
	byChannel := f.publish(t, ch)
	pr := intentEvent("project goes")
	pr.Project = "other"
	byProject := f.publish(t, pr)
	presses := map[string]string{}
	for _, ev := range []*tidings.Event{kept, byEvent, byChannel, byProject} {
		p := &tidings.ActionPress{AccountID: f.account.ID, EventID: ev.ID, ActionID: "approve", By: "ada@x.io", Via: "API"}
		_, err := f.s.PressAction(ctx, p)
		must(t, err)
		_, _, err = f.s.AcknowledgeEvent(ctx, f.account.ID, ev.ID, "ada@x.io", time.Now())
		must(t, err)
		presses[ev.ID] = p.ID
	}
	must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", byEvent.ID))
	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "deploys"))
	must(t, f.s.DeleteProject(ctx, f.account.ID, "other"))
	for _, ev := range []*tidings.Event{byEvent, byChannel, byProject} {
		_, err := f.s.FindPress(ctx, f.account.ID, presses[ev.ID])
		wantCode(t, err, tidings.ENotFound)
		if ps, err := f.s.ListPresses(ctx, f.account.ID, ev.ID); err != nil || len(ps) != 0 {
			t.Fatalf("presses of deleted %q: %d (%v)", ev.Event, len(ps), err)
		}
	}
	_, err = f.s.FindPress(ctx, f.account.ID, presses[kept.ID])
	must(t, err)
	jobs := jobsOf(t, f)
	if len(jobs) != 2 || jobs["ack-"+kept.ID] == nil || jobs["press-"+presses[kept.ID]] == nil {
		t.Fatalf("after the deletions the outbox holds %v, want the kept event's ack and press", keysOfJobs(jobs))
	}
}
