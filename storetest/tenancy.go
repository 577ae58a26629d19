package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

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
