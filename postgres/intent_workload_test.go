package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// TestIntentAcrossInstances: an event's intent fields reach the other instance's
// subscribers through the relay.
func TestIntentAcrossInstances(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	sub := p.brokerB.Subscribe(p.account.ID)
	defer sub.Close()
	want := publishOne(t, p.a, p.account.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Refund requested",
		Priority: "high", URL: "https://shop.example/r/1", ThreadKey: "refund-1",
		Actions: []tidings.Action{{Label: "Refund", ID: "refund"}, {Label: "Open", URL: "https://shop.example/o/1"}}})
	select {
	case n := <-sub.C():
		if n.Event == nil || n.Event.ID != want.ID {
			t.Fatalf("B got %+v", n)
		}
		sameIntent(t, "relayed", n.Event, want)
	case <-time.After(30 * time.Second):
		t.Fatal("the event never reached B")
	}
}

// TestIntentWorkload: two instances publish urgent keyed events with buttons (alone
// and in batches), acknowledge and press them, expand and repeat their escalation
// jobs as the delivery runner does, and delete events and a channel, all at once.
// Afterwards no acknowledged event has a repeat or push job left, each has one ack
// job, no event keeps more than MaxPresses presses, and the check finds the store whole.
func TestIntentWorkload(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	ctx := context.Background()
	acct := p.account.ID
	for _, db := range []*postgres.DB{p.a, p.b} {
		if _, err := db.CreateChannel(ctx, acct, "my-saas", "doomed"); err != nil && tidings.ErrorCode(err) != tidings.EConflict {
			t.Fatal(err)
		}
	}
	stores := []*postgres.DB{p.a, p.b}
	var mu sync.Mutex
	var ids []string
	someID := func(r *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return ""
		}
		return ids[r.IntN(len(ids))]
	}
	newEvent := func(r *rand.Rand, i int) *tidings.NewEvent {
		return checked(t, &tidings.NewEvent{Project: "my-saas", Channel: []string{"payments", "doomed"}[i%2],
			Event: fmt.Sprint("Alert ", i), Priority: []string{"urgent", "high", "", "low"}[r.IntN(4)], Notify: true,
			ThreadKey: fmt.Sprint("alert-", r.IntN(5)), URL: "https://ops.example/a",
			Actions: []tidings.Action{{Label: "Silence", ID: "silence"}}})
	}
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	worker := func(seed uint64, fn func(r *rand.Rand, db *postgres.DB, i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 38))
			for i := 0; time.Now().Before(deadline); i++ {
				if err := fn(r, stores[i%2], i); err != nil && tidings.ErrorCode(err) != tidings.ENotFound &&
					tidings.ErrorCode(err) != tidings.EChannelNotFound {
					t.Error(err)
					return
				}
			}
		}()
	}
	for w := range 3 {
		worker(uint64(w), func(r *rand.Rand, db *postgres.DB, i int) error {
			if i%3 == 0 {
				pub, err := db.PublishEvents(ctx, acct, &tidings.NewBatch{Events: []*tidings.NewEvent{newEvent(r, i), newEvent(r, i+1)}})
				for _, x := range pub {
					if x.Event != nil {
						mu.Lock()
						ids = append(ids, x.Event.ID)
						mu.Unlock()
					}
				}
				return err
			}
			ev, err := db.PublishEvent(ctx, acct, newEvent(r, i))
			if err == nil {
				mu.Lock()
				ids = append(ids, ev.ID)
				mu.Unlock()
			}
			return err
		})
	}
	for w := range 2 {
		worker(uint64(10+w), func(r *rand.Rand, db *postgres.DB, i int) error {
			id := someID(r)
			if id == "" {
				return nil
			}
			if r.IntN(2) == 0 {
				_, _, err := db.AcknowledgeEvent(ctx, acct, id, fmt.Sprint("m", w, "@x.io"), time.Now())
				return err
			}
			_, err := db.PressAction(ctx, &tidings.ActionPress{AccountID: acct, EventID: id, ActionID: "silence", By: "ada@x.io", Via: "API"})
			return err
		})
	}
	// The runner: an event job becomes a push and the first repeat; a repeat the next.
	worker(20, func(r *rand.Rand, db *postgres.DB, i int) error {
		now := time.Now()
		jobs, err := db.ClaimDeliveries(ctx, now.Add(time.Hour), time.Minute, 20, tidings.DeliverEvent, tidings.DeliverRepeat)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			n := j.Count + 1
			err := db.ReplaceDelivery(ctx, j.ID, []*tidings.Delivery{
				{Kind: tidings.DeliverPush, AccountID: acct, EventID: j.EventID, Target: "dev_1", MessageID: fmt.Sprintf("push-%s-%d", j.EventID, n), NextAt: now.Add(time.Hour), CreatedAt: now},
				{Kind: tidings.DeliverRepeat, AccountID: acct, EventID: j.EventID, Count: n, MessageID: fmt.Sprintf("repeat-%s-%d", j.EventID, n), NextAt: now, CreatedAt: now},
			}, nil)
			if err != nil {
				return err
			}
		}
		return nil
	})
	worker(30, func(r *rand.Rand, db *postgres.DB, i int) error {
		time.Sleep(20 * time.Millisecond)
		if i == 50 {
			return db.DeleteChannel(ctx, acct, "my-saas", "doomed")
		}
		id := someID(r)
		if id == "" {
			return nil
		}
		return db.DeleteEvent(ctx, acct, "my-saas", id)
	})
	wg.Wait()
	if t.Failed() {
		return
	}
	mustCheck(t, p.a, "after the workload")
	var bad int
	for _, q := range []string{
		`SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.ack_by IS NOT NULL AND d.kind IN ('repeat', 'push')`,
		`SELECT count(*) FROM events e WHERE e.ack_by IS NOT NULL AND (SELECT count(*) FROM deliveries d WHERE d.event_id = e.id AND d.kind = 'ack') <> 1`,
		`SELECT count(*) FROM (SELECT event_id FROM event_presses GROUP BY 1 HAVING count(*) > ` + fmt.Sprint(tidings.MaxPresses) + `) x`,
	} {
		if err := postgres.QueryRowForTest(p.a, q).Scan(&bad); err != nil || bad != 0 {
			t.Fatalf("%s: %d, %v", q, bad, err)
		}
	}
	var acked, presses int
	postgres.QueryRowForTest(p.a, `SELECT (SELECT count(*) FROM events WHERE ack_by IS NOT NULL), (SELECT count(*) FROM event_presses)`).Scan(&acked, &presses)
	if acked == 0 || presses == 0 {
		t.Fatalf("the workload acknowledged %d events and pressed %d times: too few to tell", acked, presses)
	}
	t.Logf("%d events, %d acknowledged, %d presses", len(ids), acked, presses)
}
