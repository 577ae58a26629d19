package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// An event's mail and escalation jobs: an acknowledgement ends its escalation (its
// mails already queued stay: what was decided before is sent), and a deleted channel's
// or project's events take both along, as they take their pushes.
func TestMailAndEscalationJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, a := openShop(t)
	for _, c := range []string{"orders", "deploys"} {
		if _, err := db.CreateChannel(ctx, a.ID, "shop", c); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	jobsOf := func(ev *tidings.Event) []*tidings.Delivery {
		t.Helper()
		now := now.Add(48 * time.Hour) // every job is due, each claimed once
		all, err := db.ClaimDeliveries(ctx, now, time.Hour, 100, tidings.DeliverMail, tidings.DeliverEscalate)
		if err != nil {
			t.Fatal(err)
		}
		var out []*tidings.Delivery
		for _, j := range all {
			if j.EventID == ev.ID {
				out = append(out, j)
			}
			if err := db.RetryDelivery(ctx, j.ID, j.Attempts, now.Add(-time.Hour)); err != nil { // claimable again
				t.Fatal(err)
			}
		}
		return out
	}
	urgent := func(channel string) *tidings.Event {
		t.Helper()
		ev, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: channel, Event: "disk full",
			Parser: tidings.ParserText, Notify: true, Priority: "urgent"})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range []*tidings.Delivery{
			{Kind: tidings.DeliverMail, AccountID: a.ID, EventID: ev.ID, Target: tidings.MailTarget(1), MessageID: "<m." + ev.ID + "@x>"},
			{Kind: tidings.DeliverEscalate, AccountID: a.ID, EventID: ev.ID, NextAt: now.Add(10 * time.Minute)},
		} {
			if err := db.EnqueueDelivery(ctx, j); err != nil {
				t.Fatal(err)
			}
		}
		return ev
	}
	ev := urgent("orders")
	if jobs := jobsOf(ev); len(jobs) != 2 {
		t.Fatalf("an urgent event's mail and escalation: %d jobs", len(jobs))
	}
	if _, first, err := db.AcknowledgeEvent(ctx, a.ID, ev.ID, "ada", now); err != nil || !first {
		t.Fatalf("AcknowledgeEvent = %v, %v", first, err)
	}
	if jobs := jobsOf(ev); len(jobs) != 1 || jobs[0].Kind != tidings.DeliverMail {
		t.Fatalf("after the acknowledgement: %+v, want its mail only", jobs)
	}
	deploys := urgent("deploys")
	if err := db.DeleteChannel(ctx, a.ID, "shop", "deploys"); err != nil {
		t.Fatal(err)
	}
	if jobs := jobsOf(deploys); len(jobs) != 0 {
		t.Fatalf("a deleted channel's event's jobs: %+v", jobs)
	}
	mustCheck(t, db)
	if err := db.DeleteProject(ctx, a.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	if jobs := jobsOf(ev); len(jobs) != 0 {
		t.Fatalf("a deleted project's event's jobs: %+v", jobs)
	}
	mustCheck(t, db)
}
