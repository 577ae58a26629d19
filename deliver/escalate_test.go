package deliver_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/pushtest"
)

// clock is the runner's injected clock: the real time plus what the test moved it on.
type clock struct{ off atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// settled waits until the outbox holds n jobs: what was due is done, and a clock moved
// on now cannot make a job under way due a second time.
func (e *env) settled(n int) {
	e.t.Helper()
	got := -1
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _, _ = e.store.PendingDeliveries(context.Background()); got == n {
			return
		}
	}
	e.t.Fatalf("%d jobs in the outbox, want %d", got, n)
}

// escalation is a push env with the project's escalation set and a runner on a clock.
func escalation(t *testing.T, times int, store func(outboxStore) tidings.Store) (*pushEnv, *clock) {
	e := newPushEnv(t)
	e.must(e.store.SetRepeatUrgent(context.Background(), e.account.ID, "my-saas", time.Minute, times))
	clk := &clock{}
	cfg := deliver.Config{VAPID: e.vapid, Now: clk.Now}
	if store != nil {
		cfg.Store = store(e.store)
	}
	e.env.run(cfg)
	return e, clk
}

// pollQuiet is longer than the runner's poll: a due job would have been sent by then.
const pollQuiet = 1500 * time.Millisecond

// TestEscalationRepeats: an urgent event is pushed again every RepeatUrgentEvery (the
// clock moved on), with the same tag, buzzing again, until RepeatUrgentTimes repeats;
// then the outbox is empty and nothing more comes.
func TestEscalationRepeats(t *testing.T) {
	t.Parallel()
	e, clk := escalation(t, 3, nil)
	d, _ := e.device(e.user("ada@example.com"))
	ev := e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: "urgent"})
	first := message(t, d.Next(t, 30*time.Second))
	if first.EventID != ev.ID || first.Renotify || !first.Ack || !first.RequireInteraction {
		t.Fatalf("first push %+v", first)
	}
	for n := 1; n <= 3; n++ {
		e.settled(1) // the next repeat, due in a minute
		d.Quiet(t, 10*time.Millisecond)
		clk.Advance(45 * time.Second) // the clock also runs: 15 s of margin
		d.Quiet(t, pollQuiet)         // not before its time
		clk.Advance(15 * time.Second)
		p := d.Next(t, 30*time.Second)
		m := message(t, p)
		if m.EventID != ev.ID || m.Tag != first.Tag || !m.Renotify || !m.Ack || p.Header.Get("Urgency") != "high" ||
			p.Header.Get("Topic") == "" {
			t.Fatalf("repeat %d: %s (Topic %q)", n, p.Plaintext, p.Header.Get("Topic"))
		}
	}
	e.settled(0)
	clk.Advance(time.Hour)
	d.Quiet(t, pollQuiet)
}

// TestEscalationStopsOnAck: an acknowledgement ends the repeats for everyone, replaces
// the notification with "✓ Acknowledged by …" (same tag, silent) on each device that
// was sent it, and goes to the standard webhooks as event.acknowledged.
func TestEscalationStopsOnAck(t *testing.T) {
	t.Parallel()
	e, clk := escalation(t, 5, nil)
	ctx := context.Background()
	rx := newReceiver(t)
	w := e.webhook(rx.URL, tidings.FormatStandard, tidings.WebhookNotify)
	ada, bob := e.user("ada@example.com"), e.user("bob@example.com")
	adaDev, _ := e.device(ada)
	bobDev, _ := e.device(bob)
	ev := e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: "urgent"})
	first := message(t, adaDev.Next(t, 30*time.Second))
	bobDev.Next(t, 30*time.Second)
	rx.next(t, 30*time.Second) // event.published
	e.settled(1)
	clk.Advance(time.Minute)
	adaDev.Next(t, 30*time.Second)
	bobDev.Next(t, 30*time.Second)
	e.settled(1)

	acked, isFirst, err := e.store.AcknowledgeEvent(ctx, e.account.ID, ev.ID, "ada@example.com", clk.Now())
	e.must(err)
	if !isFirst || acked.Ack == nil || acked.Ack.By != "ada@example.com" {
		t.Fatalf("ack %+v first=%v", acked.Ack, isFirst)
	}
	for _, p := range []pushtest.Push{adaDev.Next(t, 30*time.Second), bobDev.Next(t, 30*time.Second)} {
		m := message(t, p)
		if m.Title != "✓ Acknowledged by ada@example.com" || m.Body != "DB down" || m.Tag != first.Tag || !m.Silent || m.Ack ||
			m.Renotify || m.RequireInteraction || m.Press != nil {
			t.Fatalf("ack notification %s", p.Plaintext)
		}
	}
	rec := rx.next(t, 30*time.Second)
	verify(t, w.Secret, rec)
	var msg struct {
		Type      string
		Timestamp string
		Data      deliver.AckData
	}
	e.must(json.Unmarshal(rec.body, &msg))
	if msg.Type != "event.acknowledged" || msg.Data.By != "ada@example.com" || msg.Data.Event.ID != ev.ID ||
		msg.Data.Event.Ack == nil || msg.Data.Event.Ack.By != "ada@example.com" || !msg.Data.At.Equal(acked.Ack.At) {
		t.Fatalf("event.acknowledged %s", rec.body)
	}
	e.settled(0)
	clk.Advance(10 * time.Minute)
	adaDev.Quiet(t, pollQuiet)
	bobDev.Quiet(t, 10*time.Millisecond)
	rx.quiet(t, 10*time.Millisecond)
}

// TestEscalationStopsOnLaterVersion: an urgent event followed by a version of its key
// that is not urgent (the "resolved") is not repeated.
func TestEscalationStopsOnLaterVersion(t *testing.T) {
	t.Parallel()
	e, clk := escalation(t, 5, nil)
	d, _ := e.device(e.user("ada@example.com"))
	e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: "urgent", ThreadKey: "db-1"})
	d.Next(t, 30*time.Second)
	e.settled(1)
	e.publish(tidings.NewEvent{Event: "DB up again", ThreadKey: "db-1"})
	e.settled(1) // the resolved version sends nothing itself (no notify)
	clk.Advance(time.Minute)
	e.settled(0)
	d.Quiet(t, pollQuiet)
}

// racing wraps a store to acknowledge the event at a chosen moment of a repeat.
type racing struct {
	outboxStore
	once sync.Once
	// beforeReplace: acknowledge when the repeat is about to replace itself;
	// else when a repeat's push has just been claimed.
	beforeReplace bool
	acked         chan struct{}
}

func (r *racing) ack(j *tidings.Delivery) {
	r.once.Do(func() {
		if _, _, err := r.outboxStore.AcknowledgeEvent(context.Background(), j.AccountID, j.EventID, "ada@example.com", time.Now()); err != nil {
			panic(err)
		}
		close(r.acked)
	})
}

func (r *racing) ReplaceDelivery(ctx context.Context, id int64, jobs []*tidings.Delivery, recs []*tidings.PushRecord) error {
	for _, j := range jobs {
		if r.beforeReplace && j.Kind == tidings.DeliverRepeat && j.Count > 1 {
			r.ack(j)
		}
	}
	return r.outboxStore.ReplaceDelivery(ctx, id, jobs, recs)
}

func (r *racing) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, kinds ...string) ([]*tidings.Delivery, error) {
	jobs, err := r.outboxStore.ClaimDeliveries(ctx, now, lease, limit, kinds...)
	for _, j := range jobs {
		if !r.beforeReplace && j.Kind == tidings.DeliverPush && len(j.MessageID) > 7 && j.MessageID[:7] == "repeat-" {
			r.ack(j)
		}
	}
	return jobs, err
}

// TestAckRacingRepeat: an acknowledgement that lands while a repeat is under way —
// after it read the event and before it replaced itself, or after its push was
// claimed and before it was sent — never produces a repeat after it.
func TestAckRacingRepeat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		beforeReplace bool
	}{{"before the repeat replaces itself", true}, {"after the repeat's push was claimed", false}} {
		t.Run(c.name, func(t *testing.T) {
			race := &racing{beforeReplace: c.beforeReplace, acked: make(chan struct{})}
			e, clk := escalation(t, 5, func(s outboxStore) tidings.Store { race.outboxStore = s; return race })
			d, _ := e.device(e.user("ada@example.com"))
			ev := e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: "urgent"})
			first := message(t, d.Next(t, 30*time.Second))
			e.settled(1)
			clk.Advance(time.Minute)
			select {
			case <-race.acked:
			case <-time.After(30 * time.Second):
				t.Fatal("the repeat never ran")
			}
			// The only thing the device gets after the acknowledgement is its replacement.
			p := d.Next(t, 30*time.Second)
			if m := message(t, p); m.Title != "✓ Acknowledged by ada@example.com" || m.Tag != first.Tag || m.EventID != ev.ID {
				t.Fatalf("after the acknowledgement the device got %s", p.Plaintext)
			}
			e.settled(0)
			clk.Advance(10 * time.Minute)
			d.Quiet(t, pollQuiet)
		})
	}
}
