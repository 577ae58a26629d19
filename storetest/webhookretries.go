package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// testWebhookRetries: the delivery log learns when a webhook's pending deliveries are
// tried next, by message ID; a finished one is gone; other webhooks' and other
// accounts' are not seen.
func testWebhookRetries(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	hook := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: "my-saas", URL: "https://hooks.example/a", Format: tidings.FormatStandard, Events: tidings.WebhookAll}
	must(t, f.s.CreateWebhook(ctx, f.account.ID, hook))
	next := epoch.Add(4 * time.Minute)
	must(t, f.s.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverWebhook, AccountID: f.account.ID, EventID: "e1",
		Target: hook.ID, MessageID: "msg_retried", NextAt: epoch, CreatedAt: epoch}))
	must(t, f.s.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverTest, AccountID: f.account.ID, EventID: "test",
		Target: hook.ID, MessageID: "msg_test", NextAt: epoch, CreatedAt: epoch}))
	must(t, f.s.EnqueueDelivery(ctx, &tidings.Delivery{Kind: tidings.DeliverWebhook, AccountID: f.account.ID, EventID: "e2",
		Target: "wh_another", MessageID: "msg_other", NextAt: epoch, CreatedAt: epoch}))
	jobs, err := f.s.ClaimDeliveries(ctx, epoch.Add(time.Second), time.Minute, 10, tidings.DeliverWebhook, tidings.DeliverTest)
	must(t, err)
	for _, j := range jobs {
		switch j.MessageID {
		case "msg_retried":
			must(t, f.s.RetryDelivery(ctx, j.ID, 3, next))
		case "msg_test":
			must(t, f.s.FinishDelivery(ctx, j.ID))
		}
	}
	got, err := f.s.WebhookRetries(ctx, f.account.ID, hook.ID)
	must(t, err)
	if len(got) != 1 || !got["msg_retried"].Equal(next) {
		t.Fatalf("WebhookRetries = %v, want msg_retried at %v", got, next)
	}
	other := newAccount(t, f.s, "globex")
	if got, err := f.s.WebhookRetries(ctx, other.ID, hook.ID); err != nil || len(got) != 0 {
		t.Fatalf("another account sees the retries: %v %v", got, err)
	}
}
