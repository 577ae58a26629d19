package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// intentStore is a store with accounts acme and umbrella, each with project shop and
// its channels orders and deploys.
func intentStore(t *testing.T) (*postgres.DB, int64, int64) {
	t.Helper()
	ctx := context.Background()
	db := open(t)
	var ids []int64
	for _, name := range []string{"acme", "umbrella"} {
		a, err := db.CreateAccount(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateProject(ctx, a.ID, "shop"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"orders", "deploys"} {
			if _, err := db.CreateChannel(ctx, a.ID, "shop", c); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, a.ID)
	}
	return db, ids[0], ids[1]
}

func checked(t *testing.T, e *tidings.NewEvent) *tidings.NewEvent {
	t.Helper()
	if e.Parser == "" {
		e.Parser = tidings.ParserText
	}
	var p tidings.Problems
	e.Check(&p, time.Now())
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	return e
}

func publishOne(t *testing.T, db *postgres.DB, account int64, e *tidings.NewEvent) *tidings.Event {
	t.Helper()
	ev, err := db.PublishEvent(context.Background(), account, checked(t, e))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// sameIntent fails unless got has want's intent fields.
func sameIntent(t *testing.T, where string, got, want *tidings.Event) {
	t.Helper()
	if got.Priority != want.Priority || got.URL != want.URL || got.ThreadKey != want.ThreadKey ||
		!slices.Equal(got.Actions, want.Actions) || (got.Ack == nil) != (want.Ack == nil) ||
		got.Ack != nil && (got.Ack.By != want.Ack.By || !got.Ack.At.Equal(want.Ack.At)) {
		t.Fatalf("%s: %+v (ack %+v), want %+v (ack %+v)", where, got, got.Ack, want, want.Ack)
	}
}

// TestIntentFieldsEveryPath: an event's priority, url, actions and key are written by
// a single publish and a batch and read back by every read: the feed (list, tag,
// search), FindEvent, FindEventByID (the relay's read), EventsAfter, Versions and a
// chart's scan. An event without them reads as default priority with none.
func TestIntentFieldsEveryPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := intentStore(t)
	full := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Deploy failed",
		Priority: "5", URL: "https://ci.example/run/7", ThreadKey: "deploy-7",
		Tags:    tidings.Tags{{Key: "env", Kind: tidings.KindString, Value: "prod"}},
		Actions: []tidings.Action{{Label: "Open PR", URL: "https://git.example/pr/1"}, {Label: "Approve", ID: "approve"}}})
	if full.Priority != tidings.PriorityUrgent || full.ThreadKey != "deploy-7" || len(full.Actions) != 2 {
		t.Fatalf("published %+v", full)
	}
	plain := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Deploy started"})
	if plain.Priority != tidings.PriorityDefault || plain.Actions != nil {
		t.Fatalf("published %+v", plain)
	}
	var batch []*tidings.NewEvent
	for _, pr := range []string{"min", "high"} {
		batch = append(batch, checked(t, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Deploy " + pr,
			Priority: pr, ThreadKey: "deploy-7", URL: "http://ci.example/" + pr,
			Tags: tidings.Tags{{Key: "env", Kind: tidings.KindString, Value: "prod"}}}))
	}
	pub, err := db.PublishEvents(ctx, acme, &tidings.NewBatch{Events: batch})
	if err != nil || pub[0].Err != nil || pub[1].Err != nil {
		t.Fatalf("batch: %+v, %v", pub, err)
	}
	want := map[string]*tidings.Event{full.ID: full, plain.ID: plain, pub[0].Event.ID: pub[0].Event, pub[1].Event.ID: pub[1].Event}
	if pub[0].Event.Priority != tidings.PriorityMin || pub[1].Event.URL != "http://ci.example/high" {
		t.Fatalf("batch published %+v, %+v", pub[0].Event, pub[1].Event)
	}
	all := func(where string, evs []*tidings.Event, n int) {
		t.Helper()
		if len(evs) != n {
			t.Fatalf("%s: %d events, want %d", where, len(evs), n)
		}
		for _, ev := range evs {
			sameIntent(t, where, ev, want[ev.ID])
		}
	}
	for _, q := range []tidings.EventQuery{
		{Project: "shop", Limit: 10},
		{Project: "shop", Channel: "deploys", Limit: 10},
		{Project: "shop", Tags: []tidings.Tag{{Key: "env", Value: "prod"}}, Limit: 10},
		{Project: "shop", Terms: []tidings.Term{{Words: []string{"deploy"}}}, Limit: 10},
		{Project: "shop", Channel: "deploys", Terms: []tidings.Term{{Words: []string{"deploy"}}}, Limit: 10},
	} {
		page, err := db.ListEvents(ctx, acme, q)
		if err != nil {
			t.Fatal(err)
		}
		n := 4
		if len(q.Tags) > 0 {
			n = 3
		}
		all(fmt.Sprintf("ListEvents %+v", q), page.Events, n)
	}
	for id, w := range want {
		ev, err := db.FindEvent(ctx, acme, "shop", id)
		if err != nil {
			t.Fatal(err)
		}
		sameIntent(t, "FindEvent", ev, w)
		if ev, err = db.FindEventByID(ctx, acme, id); err != nil {
			t.Fatal(err)
		}
		sameIntent(t, "FindEventByID", ev, w)
	}
	after, err := db.EventsAfter(ctx, acme, "shop", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	all("EventsAfter", after, 4)
	var scanned []*tidings.Event
	if err := db.ScanEvents(ctx, acme, tidings.EventQuery{Project: "shop"}, 100, func(ev *tidings.Event) error {
		scanned = append(scanned, ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	all("ScanEvents", scanned, 4)
	versions, n, err := db.Versions(ctx, acme, "shop", tidings.Thread{Channel: "deploys", Key: "deploy-7"}, 10)
	if err != nil || n != 3 {
		t.Fatalf("Versions: %d, %v", n, err)
	}
	all("Versions", versions, 3)
	if versions[0].ID != pub[1].Event.ID || versions[2].ID != full.ID {
		t.Fatalf("versions not newest first: %s %s %s", versions[0].ID, versions[1].ID, versions[2].ID)
	}
}

// TestVersions: the versions of a key are its channel's, newest first, limited, and
// counted in all; another channel's or account's events of that key are not among them.
func TestVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, umbrella := intentStore(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: fmt.Sprint("v", i), ThreadKey: "order-981"}).ID)
	}
	publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "other channel", ThreadKey: "order-981"})
	publishOne(t, db, umbrella, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "other account", ThreadKey: "order-981"})
	publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "no key"})
	evs, n, err := db.Versions(ctx, acme, "shop", tidings.Thread{Channel: "orders", Key: "order-981"}, 2)
	if err != nil || n != 5 || len(evs) != 2 || evs[0].ID != ids[4] || evs[1].ID != ids[3] {
		t.Fatalf("Versions limit 2: %d in all, %v, %v", n, evs, err)
	}
	if evs, n, err = db.Versions(ctx, acme, "shop", tidings.Thread{Channel: "orders", Key: "order-982"}, 2); err != nil || n != 0 || len(evs) != 0 {
		t.Fatalf("Versions of an unknown key: %d, %v, %v", n, evs, err)
	}
	if evs, n, err = db.Versions(ctx, acme, "shop", tidings.Thread{Channel: "nope", Key: "order-981"}, 2); err != nil || n != 0 || len(evs) != 0 {
		t.Fatalf("Versions of an unknown channel: %d, %v, %v", n, evs, err)
	}
	if _, _, err := db.Versions(ctx, acme, "nope", tidings.Thread{Channel: "orders", Key: "order-981"}, 2); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("Versions of an unknown project: %v", err)
	}
}

// TestPriorityFilter: MinPriority and MaxPriority keep the events of those priorities
// in every shape of feed query (project, channel, tag-driven, word search, a user's
// journey) and in a chart's scan; bounds that admit nothing give nothing.
func TestPriorityFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := intentStore(t)
	byPriority := map[tidings.Priority][]string{}
	for i := range 25 {
		pr := tidings.Priority(i%5 + 1)
		ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: []string{"orders", "deploys"}[i%2],
			Event: "Payment", Priority: pr.String(), UserID: "ada",
			Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}})
		byPriority[pr] = append(byPriority[pr], ev.ID)
	}
	for _, c := range []struct {
		min, max tidings.Priority
		want     []tidings.Priority
	}{
		{tidings.PriorityUrgent, tidings.PriorityUrgent, []tidings.Priority{5}},
		{tidings.PriorityHigh, tidings.PriorityUrgent, []tidings.Priority{4, 5}},
		{tidings.PriorityHigh, 0, []tidings.Priority{4, 5}},
		{0, tidings.PriorityLow, []tidings.Priority{1, 2}},
		{tidings.PriorityDefault, tidings.PriorityDefault, []tidings.Priority{3}},
		{tidings.PriorityLow, tidings.PriorityHigh, []tidings.Priority{2, 3, 4}},
		{tidings.PriorityUrgent, tidings.PriorityMin, nil}, // priority:>urgent
	} {
		var want []string
		for _, pr := range c.want {
			want = append(want, byPriority[pr]...)
		}
		slices.Sort(want)
		for _, q := range []tidings.EventQuery{
			{Project: "shop"},
			{Project: "shop", Channel: "orders"},
			{Project: "shop", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}},
			{Project: "shop", Terms: []tidings.Term{{Words: []string{"payment"}}}},
			{Project: "shop", Users: []string{"ada"}},
			{Project: "shop", Event: "Payment"},
		} {
			q.MinPriority, q.MaxPriority, q.Limit = c.min, c.max, 100
			page, err := db.ListEvents(ctx, acme, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range page.Events {
				if !q.PriorityMatches(ev.Priority) {
					t.Fatalf("%+v listed %s of priority %s", q, ev.ID, ev.Priority)
				}
				got = append(got, ev.ID)
			}
			slices.Sort(got)
			wantHere := want
			if q.Channel != "" {
				wantHere = nil
				for _, pr := range []tidings.Priority{1, 2, 3, 4, 5} {
					if slices.Contains(c.want, pr) {
						for _, id := range byPriority[pr] {
							ev, _ := db.FindEvent(ctx, acme, "shop", id)
							if ev.Channel == q.Channel {
								wantHere = append(wantHere, id)
							}
						}
					}
				}
				slices.Sort(wantHere)
			}
			if !slices.Equal(got, wantHere) {
				t.Fatalf("priority %d..%d, %+v: %d events, want %d", c.min, c.max, q, len(got), len(wantHere))
			}
			if q.Channel != "" {
				continue
			}
			var scanned []string
			if err := db.ScanEvents(ctx, acme, q, 100, func(ev *tidings.Event) error {
				scanned = append(scanned, ev.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			slices.Sort(scanned)
			if !slices.Equal(scanned, want) {
				t.Fatalf("ScanEvents priority %d..%d, %+v: %d events, want %d", c.min, c.max, q, len(scanned), len(want))
			}
		}
	}
}

func pending(t *testing.T, db *postgres.DB, eventID string) map[string]int {
	t.Helper()
	rows := map[string]int{}
	for _, kind := range []string{tidings.DeliverEvent, tidings.DeliverPush, tidings.DeliverRepeat, tidings.DeliverAck, tidings.DeliverPress} {
		var n int
		if err := postgres.QueryRowForTest(db, `SELECT count(*) FROM deliveries WHERE event_id = $1 AND kind = $2`, eventID, kind).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			rows[kind] = n
		}
	}
	return rows
}

// TestAcknowledge: the first acknowledgement is kept, and its transaction replaces
// the event's pending repeat and push jobs by one ack job; the second changes nothing
// and returns the first; another account's event is not found.
func TestAcknowledge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, umbrella := intentStore(t)
	ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Disk full", Priority: "urgent", Notify: true})
	other := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Other", Priority: "urgent", Notify: true})
	for _, e := range []*tidings.Event{ev, other} {
		for _, d := range []*tidings.Delivery{
			{Kind: tidings.DeliverRepeat, AccountID: acme, EventID: e.ID, MessageID: "repeat-" + e.ID + "-1", Count: 1, NextAt: time.Now().Add(time.Hour)},
			{Kind: tidings.DeliverPush, AccountID: acme, EventID: e.ID, Target: "dev_1", MessageID: "push-" + e.ID},
		} {
			if err := db.EnqueueDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := db.AcknowledgeEvent(ctx, umbrella, ev.ID, "mallory@x.io", time.Now()); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("another account's acknowledgement: %v", err)
	}
	if _, _, err := db.AcknowledgeEvent(ctx, acme, "0190a000-0000-7000-8000-000000000000", "ada@x.io", time.Now()); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("an unknown event's acknowledgement: %v", err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	got, first, err := db.AcknowledgeEvent(ctx, acme, ev.ID, "ada@x.io", at)
	if err != nil || !first || got.Ack == nil || got.Ack.By != "ada@x.io" || !got.Ack.At.Equal(at) || got.Project != "shop" || got.Event != "Disk full" {
		t.Fatalf("first acknowledgement: %+v (%+v), %v, %v", got, got.Ack, first, err)
	}
	if p := pending(t, db, ev.ID); p[tidings.DeliverRepeat] != 0 || p[tidings.DeliverPush] != 0 || p[tidings.DeliverAck] != 1 {
		t.Fatalf("jobs after the acknowledgement: %v", p)
	}
	if p := pending(t, db, other.ID); p[tidings.DeliverRepeat] != 1 || p[tidings.DeliverPush] != 1 {
		t.Fatalf("another event's jobs after the acknowledgement: %v", p)
	}
	jobs, err := db.ClaimDeliveries(ctx, at.Add(time.Second), time.Minute, 10, tidings.DeliverAck)
	if err != nil || len(jobs) != 1 || jobs[0].EventID != ev.ID || jobs[0].MessageID != "ack-"+ev.ID || !jobs[0].NextAt.Equal(at) {
		t.Fatalf("the ack job: %+v, %v", jobs, err)
	}
	again, first, err := db.AcknowledgeEvent(ctx, acme, ev.ID, "bob@x.io", at.Add(time.Minute))
	if err != nil || first || again.Ack.By != "ada@x.io" || !again.Ack.At.Equal(at) {
		t.Fatalf("second acknowledgement: %+v, %v, %v", again.Ack, first, err)
	}
	if p := pending(t, db, ev.ID); p[tidings.DeliverAck] != 1 {
		t.Fatalf("jobs after the second acknowledgement: %v", p)
	}
	for _, read := range []func() (*tidings.Event, error){
		func() (*tidings.Event, error) { return db.FindEvent(ctx, acme, "shop", ev.ID) },
		func() (*tidings.Event, error) { return db.FindEventByID(ctx, acme, ev.ID) },
	} {
		if e, err := read(); err != nil || e.Ack == nil || e.Ack.By != "ada@x.io" || !e.Ack.At.Equal(at) {
			t.Fatalf("read after the acknowledgement: %+v, %v", e, err)
		}
	}
	mustCheck(t, db, "after acknowledgements")
}

// TestAcknowledgeRace: of acknowledgements sent at once, exactly one is the first,
// every one returns its acknowledgement, and one ack job is queued.
func TestAcknowledgeRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := intentStore(t)
	for round := range 5 {
		ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Disk full", Priority: "urgent"})
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firsts []string
		acks := map[string]bool{}
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				by := fmt.Sprintf("m%d@x.io", i)
				got, first, err := db.AcknowledgeEvent(ctx, acme, ev.ID, by, time.Now())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if first {
					firsts = append(firsts, by)
				}
				acks[got.Ack.By] = true
			}()
		}
		wg.Wait()
		if len(firsts) != 1 || len(acks) != 1 || !acks[firsts[0]] {
			t.Fatalf("round %d: first %v, acknowledgements returned %v", round, firsts, acks)
		}
		if p := pending(t, db, ev.ID); p[tidings.DeliverAck] != 1 {
			t.Fatalf("round %d: jobs %v", round, p)
		}
	}
}

// TestAcknowledgeBeatsClaimedRepeat: a repeat job claimed before the acknowledgement
// and replaced after it (its pushes and the next repeat) adds nothing: no repeat
// follows an acknowledgement.
func TestAcknowledgeBeatsClaimedRepeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := intentStore(t)
	ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Disk full", Priority: "urgent"})
	now := time.Now()
	if err := db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverRepeat, AccountID: acme, EventID: ev.ID,
		MessageID: "repeat-" + ev.ID + "-1", Count: 1, NextAt: now}); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.ClaimDeliveries(ctx, now.Add(time.Second), time.Minute, 10, tidings.DeliverRepeat)
	if err != nil || len(jobs) != 1 || jobs[0].Count != 1 {
		t.Fatalf("claimed %+v, %v", jobs, err)
	}
	if _, first, err := db.AcknowledgeEvent(ctx, acme, ev.ID, "ada@x.io", now); err != nil || !first {
		t.Fatal(first, err)
	}
	if err := db.ReplaceDelivery(ctx, jobs[0].ID, []*tidings.Delivery{
		{Kind: tidings.DeliverPush, AccountID: acme, EventID: ev.ID, Target: "dev_1", MessageID: "push-r2", NextAt: now, CreatedAt: now},
		{Kind: tidings.DeliverRepeat, AccountID: acme, EventID: ev.ID, MessageID: "repeat-" + ev.ID + "-2", Count: 2, NextAt: now, CreatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	if p := pending(t, db, ev.ID); p[tidings.DeliverRepeat] != 0 || p[tidings.DeliverPush] != 0 || p[tidings.DeliverAck] != 1 {
		t.Fatalf("jobs after a repeat replaced behind the acknowledgement: %v", p)
	}
	// An event acknowledged before its expansion: the expansion adds its webhook but
	// neither its push nor its first repeat.
	if err := db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverEvent, AccountID: acme, EventID: ev.ID, NextAt: now}); err != nil {
		t.Fatal(err)
	}
	if jobs, err = db.ClaimDeliveries(ctx, now.Add(time.Second), time.Minute, 10, tidings.DeliverEvent); err != nil || len(jobs) < 1 {
		t.Fatalf("claimed %+v, %v", jobs, err)
	}
	for _, j := range jobs {
		if err := db.ReplaceDelivery(ctx, j.ID, []*tidings.Delivery{
			{Kind: tidings.DeliverWebhook, AccountID: acme, EventID: j.EventID, Target: "wh_1", MessageID: "wh-" + j.EventID, NextAt: now, CreatedAt: now},
			{Kind: tidings.DeliverPush, AccountID: acme, EventID: j.EventID, Target: "dev_1", MessageID: "push-" + j.EventID, NextAt: now, CreatedAt: now},
			{Kind: tidings.DeliverRepeat, AccountID: acme, EventID: j.EventID, MessageID: "repeat-" + j.EventID + "-1", Count: 1, NextAt: now, CreatedAt: now},
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p := pending(t, db, ev.ID); p[tidings.DeliverRepeat] != 0 || p[tidings.DeliverPush] != 0 || p[tidings.DeliverEvent] != 0 {
		t.Fatalf("jobs after an expansion behind the acknowledgement: %v", p)
	}
	var webhooks int
	if err := postgres.QueryRowForTest(db, `SELECT count(*) FROM deliveries WHERE event_id = $1 AND kind = 'webhook'`, ev.ID).Scan(&webhooks); err != nil || webhooks != 1 {
		t.Fatalf("webhook jobs after an expansion behind the acknowledgement: %d, %v", webhooks, err)
	}
}

// TestAcknowledgeRacesRepeats: acknowledgements racing replacements of claimed repeat
// jobs (each adding the next repeat) leave no repeat job behind, whichever commits first.
func TestAcknowledgeRacesRepeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := intentStore(t)
	for round := range 20 {
		ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: fmt.Sprint("Disk full ", round), Priority: "urgent"})
		now := time.Now()
		if err := db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverRepeat, AccountID: acme, EventID: ev.ID,
			MessageID: fmt.Sprintf("repeat-%s-1", ev.ID), Count: 1, NextAt: now}); err != nil {
			t.Fatal(err)
		}
		jobs, err := db.ClaimDeliveries(ctx, now.Add(time.Second), time.Minute, 10, tidings.DeliverRepeat)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claimed %+v, %v", jobs, err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, _, err := db.AcknowledgeEvent(ctx, acme, ev.ID, "ada@x.io", now); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if err := db.ReplaceDelivery(ctx, jobs[0].ID, []*tidings.Delivery{{Kind: tidings.DeliverRepeat, AccountID: acme, EventID: ev.ID,
				MessageID: fmt.Sprintf("repeat-%s-2", ev.ID), Count: 2, NextAt: now, CreatedAt: now}}, nil); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		// A replacement that found the event locked left its job to be claimed again:
		// it is gone too (the acknowledgement deleted it).
		if p := pending(t, db, ev.ID); p[tidings.DeliverRepeat] != 0 || p[tidings.DeliverAck] != 1 {
			t.Fatalf("round %d: jobs %v", round, p)
		}
	}
}

// TestPressAction: a press of an id action is recorded with its label and queues a
// press job naming it; a press of an unknown action, of a url action, of another
// account's event is not found; only the newest MaxPresses are kept, listed oldest first.
func TestPressAction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, umbrella := intentStore(t)
	ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "Deploy ready",
		Actions: []tidings.Action{{Label: "Open PR", URL: "https://git.example/pr/1"}, {Label: "Approve", ID: "approve"}}})
	for _, p := range []*tidings.ActionPress{
		{AccountID: acme, EventID: ev.ID, ActionID: "reject", By: "ada@x.io"},
		{AccountID: acme, EventID: ev.ID, ActionID: "", By: "ada@x.io"},
		{AccountID: umbrella, EventID: ev.ID, ActionID: "approve", By: "mallory@x.io"},
		{AccountID: acme, EventID: "0190a000-0000-7000-8000-000000000000", ActionID: "approve", By: "ada@x.io"},
	} {
		if _, err := db.PressAction(ctx, p); tidings.ErrorCode(err) != tidings.ENotFound {
			t.Fatalf("press %+v: %v", p, err)
		}
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	p := &tidings.ActionPress{AccountID: acme, EventID: ev.ID, ActionID: "approve", By: "ada@x.io", Via: "Pixel 8", At: at}
	got, err := db.PressAction(ctx, p)
	if err != nil || got.ID != ev.ID || p.Label != "Approve" || p.ID == "" {
		t.Fatalf("press: %+v %+v, %v", got, p, err)
	}
	found, err := db.FindPress(ctx, acme, p.ID)
	if err != nil || *found != *p {
		t.Fatalf("FindPress: %+v, %v; want %+v", found, err, p)
	}
	if _, err := db.FindPress(ctx, umbrella, p.ID); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("another account's FindPress: %v", err)
	}
	jobs, err := db.ClaimDeliveries(ctx, at.Add(time.Second), time.Minute, 10, tidings.DeliverPress)
	if err != nil || len(jobs) != 1 || jobs[0].Ref != p.ID || jobs[0].EventID != ev.ID || jobs[0].MessageID != "press-"+p.ID {
		t.Fatalf("press job: %+v, %v", jobs, err)
	}
	for i := range tidings.MaxPresses + 5 {
		if _, err := db.PressAction(ctx, &tidings.ActionPress{AccountID: acme, EventID: ev.ID, ActionID: "approve",
			By: fmt.Sprint(i), Via: "API", At: at.Add(time.Duration(i+1) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.ListPresses(ctx, acme, ev.ID)
	if err != nil || len(list) != tidings.MaxPresses || list[0].By != "5" || list[len(list)-1].By != fmt.Sprint(tidings.MaxPresses+4) {
		t.Fatalf("ListPresses: %d, %v", len(list), err)
	}
	if other, err := db.ListPresses(ctx, umbrella, ev.ID); err != nil || len(other) != 0 {
		t.Fatalf("another account's ListPresses: %v, %v", other, err)
	}
	mustCheck(t, db, "after presses")
	if err := db.DeleteEvent(ctx, acme, "shop", ev.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := db.ListPresses(ctx, acme, ev.ID); err != nil || len(list) != 0 {
		t.Fatalf("presses of a deleted event: %d, %v", len(list), err)
	}
	if p := pending(t, db, ev.ID); len(p) != 0 {
		t.Fatalf("jobs of a deleted event: %v", p)
	}
}

// TestRepeatUrgentAndUrgentOnly: a project's escalation has its defaults and is set
// within CheckRepeatUrgent's rules; a member's urgent-only choices are kept; a
// delivery's Ref goes through the outbox.
func TestRepeatUrgentAndUrgentOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, acme, _ := intentStore(t)
	p, err := db.FindProject(ctx, acme, "shop")
	if err != nil || p.RepeatUrgentEvery != tidings.RepeatUrgentEvery || p.RepeatUrgentTimes != tidings.RepeatUrgentTimes {
		t.Fatalf("defaults: %+v, %v", p, err)
	}
	if err := db.SetRepeatUrgent(ctx, acme, "shop", time.Minute, 3); err != nil {
		t.Fatal(err)
	}
	ps, err := db.ListProjects(ctx, acme)
	if err != nil || ps[0].RepeatUrgentEvery != time.Minute || ps[0].RepeatUrgentTimes != 3 {
		t.Fatalf("after SetRepeatUrgent: %+v, %v", ps[0], err)
	}
	for _, c := range []struct {
		every time.Duration
		times int
	}{{30 * time.Second, 3}, {25 * time.Hour, 3}, {time.Minute, -1}, {time.Minute, tidings.MaxRepeatUrgentTimes + 1}} {
		if err := db.SetRepeatUrgent(ctx, acme, "shop", c.every, c.times); tidings.ErrorCode(err) != tidings.EValidation {
			t.Fatalf("SetRepeatUrgent(%v, %d): %v", c.every, c.times, err)
		}
	}
	if err := db.SetRepeatUrgent(ctx, acme, "nope", time.Minute, 3); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("SetRepeatUrgent of an unknown project: %v", err)
	}
	u := &tidings.User{AccountID: acme, Email: "ada@x.io", PasswordHash: "x", Role: tidings.UserMember}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	want := &tidings.NotifyPrefs{Muted: []string{"shop/orders"}, UrgentOnly: []string{"shop", "shop/deploys"}, QuietStart: 60, QuietEnd: 120}
	if err := db.SetNotifyPrefs(ctx, u.ID, want); err != nil {
		t.Fatal(err)
	}
	got, err := db.NotifyPrefs(ctx, u.ID)
	if err != nil || !slices.Equal(got.UrgentOnly, want.UrgentOnly) || !slices.Equal(got.Muted, want.Muted) {
		t.Fatalf("NotifyPrefs: %+v, %v", got, err)
	}
	all, err := db.AccountNotifyPrefs(ctx, acme)
	if err != nil || !slices.Equal(all[u.ID].UrgentOnly, want.UrgentOnly) {
		t.Fatalf("AccountNotifyPrefs: %+v, %v", all, err)
	}
	ev := publishOne(t, db, acme, &tidings.NewEvent{Project: "shop", Channel: "deploys", Event: "e", Actions: []tidings.Action{{Label: "Go", ID: "go"}}})
	now := time.Now()
	if err := db.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverPress, AccountID: acme, EventID: ev.ID, MessageID: "m1", Ref: "press_1", NextAt: now}); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.ClaimDeliveries(ctx, now.Add(time.Second), time.Minute, 10)
	if err != nil || len(jobs) != 1 || jobs[0].Ref != "press_1" {
		t.Fatalf("claimed %+v, %v", jobs, err)
	}
	if err := db.ReplaceDelivery(ctx, jobs[0].ID, []*tidings.Delivery{{Kind: tidings.DeliverWebhookPress, AccountID: acme, EventID: ev.ID,
		Target: "wh_1", MessageID: "m2", Ref: "press_1", NextAt: now, CreatedAt: now}}, nil); err != nil {
		t.Fatal(err)
	}
	if jobs, err = db.ClaimDeliveries(ctx, now.Add(time.Second), time.Minute, 10); err != nil || len(jobs) != 1 || jobs[0].Ref != "press_1" || jobs[0].Kind != tidings.DeliverWebhookPress {
		t.Fatalf("claimed after the replacement %+v, %v", jobs, err)
	}
}
