package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func testWebhooks(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	all := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: "https://hooks.example/a", Format: tidings.FormatStandard,
		Events: tidings.WebhookAll, Name: "everything", Secret: tidings.NewWebhookSecret()}
	must(t, f.s.CreateWebhook(ctx, f.account.ID, all))
	deploys := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", Channel: "deploys", URL: "https://hooks.example/b",
		Format: tidings.FormatSlack, Events: tidings.WebhookNotify}
	must(t, f.s.CreateWebhook(ctx, f.account.ID, deploys))
	wantCode(t, f.s.CreateWebhook(ctx, f.account.ID, &tidings.Webhook{ID: "wh_x", Project: "nope", URL: "https://x"}), tidings.EProjectNotFound)
	wantCode(t, f.s.CreateWebhook(ctx, f.account.ID, &tidings.Webhook{ID: "wh_y", Project: "my-saas", Channel: "nope", URL: "https://x"}), tidings.EChannelNotFound)

	list, err := f.s.ListWebhooks(ctx, f.account.ID)
	must(t, err)
	if len(list) != 2 || list[0].ID != all.ID || list[0].Secret != all.Secret || list[1].Channel != "deploys" || list[1].Format != tidings.FormatSlack {
		t.Fatalf("ListWebhooks = %+v", list)
	}
	got, err := f.s.FindWebhook(ctx, f.account.ID, deploys.ID)
	must(t, err)
	if got.URL != deploys.URL || got.Project != "my-saas" || got.Events != tidings.WebhookNotify {
		t.Fatalf("FindWebhook = %+v", got)
	}
	other := newAccount(t, f.s, "globex")
	_, err = f.s.FindWebhook(ctx, other.ID, deploys.ID)
	wantCode(t, err, tidings.ENotFound)
	wantCode(t, f.s.DeleteWebhook(ctx, other.ID, deploys.ID), tidings.ENotFound)

	for channel, want := range map[string]int{"payments": 1, "deploys": 2} {
		ws, err := f.s.WebhooksFor(ctx, f.account.ID, "my-saas", channel)
		must(t, err)
		if len(ws) != want {
			t.Fatalf("WebhooksFor(%s) = %d webhooks, want %d", channel, len(ws), want)
		}
	}
	if ws, _ := f.s.WebhooksFor(ctx, other.ID, "my-saas", "deploys"); len(ws) != 0 {
		t.Fatalf("another account's webhooks: %+v", ws)
	}

	// Only the latest 20 attempts are kept; another account sees none.
	for i := 0; i < 25; i++ {
		must(t, f.s.RecordWebhookAttempt(ctx, &tidings.WebhookAttempt{WebhookID: all.ID, MessageID: "msg_1", EventID: "e",
			Attempt: i + 1, Status: 500 + i%2, Error: fmt.Sprint("try ", i), Duration: 12 * time.Millisecond, At: epoch.Add(time.Duration(i) * time.Second)}))
	}
	attempts, err := f.s.ListWebhookAttempts(ctx, f.account.ID, all.ID)
	must(t, err)
	if len(attempts) != 20 || attempts[0].Attempt != 25 || attempts[19].Attempt != 6 || attempts[0].Duration != 12*time.Millisecond {
		t.Fatalf("attempts: %d, first %+v", len(attempts), attempts[0])
	}
	if a, _ := f.s.ListWebhookAttempts(ctx, other.ID, all.ID); len(a) != 0 {
		t.Fatalf("another account reads the attempts: %d", len(a))
	}

	// Deleting a webhook drops its pending deliveries.
	must(t, f.s.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverWebhook, AccountID: f.account.ID, EventID: "e", Target: deploys.ID, MessageID: "msg_2"}))
	must(t, f.s.DeleteWebhook(ctx, f.account.ID, deploys.ID))
	if n, _, err := f.s.PendingDeliveries(ctx); err != nil || n != 0 {
		t.Fatalf("pending after delete: %d %v", n, err)
	}
	_, err = f.s.FindWebhook(ctx, f.account.ID, deploys.ID)
	wantCode(t, err, tidings.ENotFound)
}

// testOutbox: an event that may go out writes its delivery job in its own transaction;
// jobs are leased, replaced, retried and finished.
func testOutbox(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	pending := func() int {
		t.Helper()
		n, _, err := f.s.PendingDeliveries(ctx)
		must(t, err)
		return n
	}
	f.publish(t, tidings.NewEvent{Event: "quiet"})
	if n := pending(); n != 0 {
		t.Fatalf("an event without notify and without webhooks made %d jobs", n)
	}
	f.publish(t, tidings.NewEvent{Event: "backfill", Notify: true, Timestamp: time.Now().Add(-2 * time.Hour)})
	if n := pending(); n != 0 {
		t.Fatalf("a backfilled notify event made %d jobs", n)
	}
	ev := f.publish(t, tidings.NewEvent{Event: "paid", Notify: true})
	if n := pending(); n != 1 {
		t.Fatalf("a notify event made %d jobs, want 1", n)
	}
	must(t, f.s.CreateWebhook(ctx, f.account.ID, &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas",
		URL: "https://hooks.example", Format: tidings.FormatStandard, Events: tidings.WebhookAll}))
	f.publish(t, tidings.NewEvent{Event: "mirrored"})
	if n := pending(); n != 2 {
		t.Fatalf("with a webhook for every event: %d jobs, want 2", n)
	}

	got, err := f.s.FindEventByID(ctx, f.account.ID, ev.ID)
	must(t, err)
	if got.Event != "paid" || got.Project != "my-saas" {
		t.Fatalf("FindEventByID = %+v", got)
	}
	other := newAccount(t, f.s, "globex")
	_, err = f.s.FindEventByID(ctx, other.ID, ev.ID)
	wantCode(t, err, tidings.ENotFound)

	now := time.Now().Add(time.Second)
	// A pool claims only its kinds: the webhooks' finds none of the events' jobs.
	if other, err := f.s.ClaimDeliveries(ctx, now, time.Minute, 10, tidings.DeliverWebhook, tidings.DeliverTest); err != nil || len(other) != 0 {
		t.Fatalf("claiming webhook jobs among event jobs: %+v, %v", other, err)
	}
	jobs, err := f.s.ClaimDeliveries(ctx, now, time.Minute, 10, tidings.DeliverEvent)
	must(t, err)
	if len(jobs) != 2 || jobs[0].Kind != tidings.DeliverEvent || jobs[0].EventID != ev.ID || jobs[0].AccountID != f.account.ID {
		t.Fatalf("claimed %+v", jobs)
	}
	if again, _ := f.s.ClaimDeliveries(ctx, now, time.Minute, 10); len(again) != 0 {
		t.Fatalf("leased jobs claimed twice: %d", len(again))
	}
	// A claimer that died: its lease runs out and the job is due again.
	if again, _ := f.s.ClaimDeliveries(ctx, now.Add(2*time.Minute), time.Minute, 10); len(again) != 2 {
		t.Fatalf("after the lease: %d jobs", len(again))
	}

	// Expanding replaces the event's job by one per target, atomically.
	must(t, f.s.ReplaceDelivery(ctx, jobs[0].ID, []*tidings.Delivery{
		{Kind: tidings.DeliverWebhook, AccountID: f.account.ID, EventID: ev.ID, Target: "wh_a", MessageID: "msg_a", NextAt: now, CreatedAt: now},
		{Kind: tidings.DeliverWebhook, AccountID: f.account.ID, EventID: ev.ID, Target: "wh_b", MessageID: "msg_b", NextAt: now, CreatedAt: now},
		{Kind: tidings.DeliverWebhook, AccountID: f.account.ID, EventID: ev.ID, Target: "wh_b", MessageID: "msg_b", NextAt: now, CreatedAt: now},
	}, nil)) // the repeated message id is added once
	if n := pending(); n != 3 {
		t.Fatalf("after expanding: %d jobs", n)
	}
	must(t, f.s.FinishDelivery(ctx, jobs[1].ID))
	later := now.Add(10 * time.Minute)
	fresh, err := f.s.ClaimDeliveries(ctx, later, time.Minute, 10)
	must(t, err)
	if len(fresh) != 2 || fresh[0].MessageID == "" || fresh[0].Target == "" {
		t.Fatalf("expanded jobs: %+v", fresh)
	}
	must(t, f.s.RetryDelivery(ctx, fresh[0].ID, 1, later.Add(time.Hour)))
	if due, _ := f.s.ClaimDeliveries(ctx, later.Add(30*time.Minute), time.Minute, 10); len(due) != 1 || due[0].ID != fresh[1].ID {
		t.Fatalf("before its retry time: %+v", due)
	}
	due, err := f.s.ClaimDeliveries(ctx, later.Add(2*time.Hour), time.Minute, 10)
	must(t, err)
	// Oldest due first: the job not retried, then the retried one with its attempt.
	if len(due) != 2 || due[0].ID != fresh[1].ID || due[1].ID != fresh[0].ID || due[1].Attempts != 1 {
		t.Fatalf("after its retry time: %d jobs, %v", len(due), due)
	}
	if _, oldest, _ := f.s.PendingDeliveries(ctx); oldest.IsZero() || oldest.After(now) {
		t.Fatalf("oldest pending = %v", oldest)
	}

	// An event deleted while its job is expanded: the deletion takes the job, and the
	// replacement adds nothing that would outlive the event.
	before := pending()
	gone := f.publish(t, tidings.NewEvent{Event: "deleted meanwhile", Notify: true})
	claimed, err := f.s.ClaimDeliveries(ctx, later.Add(3*time.Hour), time.Minute, 10, tidings.DeliverEvent)
	must(t, err)
	if len(claimed) != 1 || claimed[0].EventID != gone.ID {
		t.Fatalf("claimed %+v, want the job of %s", claimed, gone.ID)
	}
	must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", gone.ID))
	must(t, f.s.ReplaceDelivery(ctx, claimed[0].ID, []*tidings.Delivery{{Kind: tidings.DeliverWebhook, AccountID: f.account.ID,
		EventID: gone.ID, Target: "wh_a", MessageID: "msg_gone", NextAt: now, CreatedAt: now}}, nil))
	if n := pending(); n != before {
		t.Fatalf("after expanding a deleted event's job: %d jobs, want %d", n, before)
	}
	// A channel's or project's deletion takes its events' jobs along.
	for _, scope := range []string{"channel", "project"} {
		_, err := f.s.CreateProject(ctx, f.account.ID, "tmp")
		must(t, err)
		_, err = f.s.CreateChannel(ctx, f.account.ID, "tmp", "c")
		must(t, err)
		f.publish(t, tidings.NewEvent{Project: "tmp", Channel: "c", Event: "in a " + scope + " deleted", Notify: true})
		if scope == "channel" {
			must(t, f.s.DeleteChannel(ctx, f.account.ID, "tmp", "c"))
		} else {
			must(t, f.s.DeleteProject(ctx, f.account.ID, "tmp"))
		}
		if n := pending(); n != before {
			t.Fatalf("after deleting a %s: %d jobs, want %d", scope, n, before)
		}
		if scope == "channel" {
			must(t, f.s.DeleteProject(ctx, f.account.ID, "tmp"))
		}
	}
}
