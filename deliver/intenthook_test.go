package deliver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
)

// TestIntentWebhooks: a press of an id action goes to the standard webhooks of the
// project as a signed event.action (whatever their --events: this one sends only notify
// events, and the event is not one), retried with the same webhook-id; an
// acknowledgement goes as event.acknowledged; chat formats get neither.
func TestIntentWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rx := newReceiver(t, 500)
	w := e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookNotify)
	slack := newReceiver(t)
	e.webhook(slack.URL, tidings.FormatSlack, tidings.WebhookNotify)
	e.run(deliver.Config{})
	ev := e.publish(tidings.NewEvent{Event: "Refund requested", Priority: "urgent",
		Actions: []tidings.Action{{Label: "Approve", ID: "approve"}, {Label: "Open", URL: "https://example.com/r/1"}}})

	if _, err := e.store.PressAction(ctx, &tidings.ActionPress{AccountID: e.account.ID, EventID: ev.ID, ActionID: "nope",
		By: "ada@example.com", Via: "Pixel 8", At: time.Now()}); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("a press of no such action: %v", err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	press := &tidings.ActionPress{AccountID: e.account.ID, EventID: ev.ID, ActionID: "approve", By: "ada@example.com", Via: "Pixel 8", At: at}
	_, err := e.store.PressAction(ctx, press)
	e.must(err)
	first, second := rx.next(t, 30*time.Second), rx.next(t, 30*time.Second)
	verify(t, w.Secret, second)
	if first.header.Get("webhook-id") != second.header.Get("webhook-id") {
		t.Fatal("a retry of event.action has another webhook-id")
	}
	var action struct {
		Type      string
		Timestamp string
		Data      deliver.PressData
	}
	e.must(json.Unmarshal(second.body, &action))
	if action.Type != "event.action" || action.Data.Event.ID != ev.ID || action.Data.Action != (deliver.PressedAction{ID: "approve", Label: "Approve"}) ||
		action.Data.By != "ada@example.com" || action.Data.Via != "Pixel 8" || !action.Data.At.Equal(at) || len(action.Data.Event.Actions) != 2 {
		t.Fatalf("event.action %s", second.body)
	}
	var raw struct {
		Data map[string]json.RawMessage
	}
	e.must(json.Unmarshal(second.body, &raw))
	for _, k := range []string{"event", "action", "by", "at", "via"} {
		if raw.Data[k] == nil {
			t.Fatalf("event.action without data.%s: %s", k, second.body)
		}
	}

	_, _, err = e.store.AcknowledgeEvent(ctx, e.account.ID, ev.ID, "ops-bot", at)
	e.must(err)
	rec := rx.next(t, 30*time.Second)
	verify(t, w.Secret, rec)
	var ack struct {
		Type string
		Data deliver.AckData
	}
	e.must(json.Unmarshal(rec.body, &ack))
	if ack.Type != "event.acknowledged" || ack.Data.By != "ops-bot" || !ack.Data.At.Equal(at) || ack.Data.Event.Ack == nil {
		t.Fatalf("event.acknowledged %s", rec.body)
	}
	slack.quiet(t, 300*time.Millisecond)
	rx.quiet(t, 10*time.Millisecond)
	e.settled(0)
}
