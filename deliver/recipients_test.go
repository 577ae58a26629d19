package deliver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pushtest"
)

// recipients parses a setting; "" is nil (a channel follows its project, a project is
// everyone's).
func recipients(t *testing.T, s string) *tidings.Recipients {
	t.Helper()
	if s == "" {
		return nil
	}
	r, err := tidings.ParseRecipients(s)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestRecipientsMutesQuietUrgent crosses who is notified (the project's setting, the
// channel's own or following it) with each member's choices (none, a mute, quiet hours,
// "urgent only") and the event's priority (default, urgent): a member who is not a
// recipient gets no push and the record "not-recipient", whatever their choices; a
// recipient's choices apply as before. A change is seen within seconds (the cache).
func TestRecipientsMutesQuietUrgent(t *testing.T) {
	t.Parallel()
	e, clk := escalation(t, 0, nil) // no repeats: this test is about the first push
	ctx := context.Background()
	type member struct {
		user *tidings.User
		dev  *pushtest.Device
		sub  *tidings.PushSubscription
		sent int
	}
	members := map[string]*member{}
	for _, name := range []string{"plain", "muter", "night", "urgent"} {
		m := &member{user: e.user(name + "@example.com")}
		m.dev, m.sub = e.device(m.user)
		members[name] = m
	}
	e.must(e.store.SetNotifyPrefs(ctx, members["muter"].user.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas/payments"}}))
	now := time.Now().UTC()
	start := (now.Hour()*60 + now.Minute() + 1440 - 60) % 1440
	e.must(e.store.SetNotifyPrefs(ctx, members["night"].user.ID, &tidings.NotifyPrefs{QuietStart: start, QuietEnd: (start + 180) % 1440, TimeZone: "UTC"}))
	e.must(e.store.SetNotifyPrefs(ctx, members["urgent"].user.ID, &tidings.NotifyPrefs{UrgentOnly: []string{"my-saas"}}))

	all := []string{"plain", "muter", "night", "urgent"}
	cases := []struct {
		name             string
		project, channel string // settings; "" follows / is the default
		notified         []string
	}{
		{"everyone by default", "", "", all},
		{"nobody", "nobody", "", nil},
		{"the project's members", "plain@example.com,muter@example.com", "", []string{"plain", "muter"}},
		{"the channel's own members", "nobody", "night@example.com,urgent@example.com,URGENT@example.com", []string{"night", "urgent"}},
		{"the channel's everyone over the project's nobody", "nobody", "everyone", all},
		{"the channel's nobody over the project's everyone", "everyone", "nobody", nil},
		{"the channel follows the project again", "plain@example.com,night@example.com", "", []string{"plain", "night"}},
		{"a chosen member's mute still holds", "muter@example.com", "", []string{"muter"}},
	}
	for _, c := range cases {
		e.must(e.store.SetRecipients(ctx, e.account.ID, "my-saas", "", recipients(t, c.project)))
		e.must(e.store.SetRecipients(ctx, e.account.ID, "my-saas", "payments", recipients(t, c.channel)))
		clk.Advance(2 * time.Second) // past the cache's second
		notified := map[string]bool{}
		for _, n := range c.notified {
			notified[n] = true
		}
		for _, priority := range []string{"default", "urgent"} {
			ev := e.publish(tidings.NewEvent{Event: c.name, Notify: true, Priority: priority})
			urgent := priority == "urgent"
			want := map[string]string{}
			for name := range members {
				switch {
				case !notified[name]:
					want[name] = tidings.PushNotRecipient
				case name == "muter":
					want[name] = tidings.PushMuted
				case name == "urgent" && !urgent:
					want[name] = tidings.PushMuted
				case name == "night" && !urgent:
					want[name] = tidings.PushQuiet
				default:
					want[name] = tidings.PushSent
				}
			}
			var got map[string]string
			settled := func() bool {
				recs, err := e.store.EventPushes(ctx, e.account.ID, ev.ID)
				if err != nil || len(recs) != len(members) {
					return false
				}
				got = map[string]string{}
				for _, r := range recs {
					for name, m := range members {
						if m.sub.ID == r.SubscriptionID {
							got[name] = r.Status
						}
					}
				}
				for name := range members {
					if got[name] == tidings.PushPending {
						return false
					}
				}
				return true
			}
			for deadline := time.Now().Add(30 * time.Second); !settled() && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			}
			for name, status := range want {
				if got[name] != status {
					t.Fatalf("%s, %s event: %s's record is %q, want %q (all: %v)", c.name, priority, name, got[name], status, got)
				}
				if status == tidings.PushSent {
					members[name].sent++
				}
			}
		}
	}
	// Each device had exactly the pushes its records say were sent.
	for name, m := range members {
		if n := len(m.dev.Drain(300 * time.Millisecond)); n != m.sent {
			t.Fatalf("%s's device had %d pushes, its records say %d", name, n, m.sent)
		}
	}
}

// TestRepeatsOnlyToRecipients: an urgent event's repeats go to its recipients only.
func TestRepeatsOnlyToRecipients(t *testing.T) {
	t.Parallel()
	e, clk := escalation(t, 2, nil)
	ctx := context.Background()
	ada, bob := e.user("ada@example.com"), e.user("bob@example.com")
	adaDev, _ := e.device(ada)
	bobDev, bobSub := e.device(bob)
	e.must(e.store.SetRecipients(ctx, e.account.ID, "my-saas", "payments", recipients(t, "ada@example.com")))
	ev := e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: "urgent"})
	if m := message(t, adaDev.Next(t, 30*time.Second)); m.EventID != ev.ID || m.Renotify {
		t.Fatalf("first push %+v", m)
	}
	e.settled(1) // the first repeat, due in a minute
	clk.Advance(time.Minute + time.Second)
	if m := message(t, adaDev.Next(t, 30*time.Second)); m.EventID != ev.ID || !m.Renotify {
		t.Fatalf("repeat %+v", m)
	}
	e.settled(1)
	clk.Advance(time.Minute + time.Second)
	message(t, adaDev.Next(t, 30*time.Second))
	e.settled(0)
	bobDev.Quiet(t, pollQuiet)
	recs, err := e.store.EventPushes(ctx, e.account.ID, ev.ID)
	e.must(err)
	for _, r := range recs {
		if r.SubscriptionID == bobSub.ID && r.Status != tidings.PushNotRecipient {
			t.Fatalf("bob's record %q", r.Status)
		}
	}
}

// countingStore counts the reads of recipients.
type countingStore struct {
	tidings.Store
	reads atomic.Int64
}

func (s *countingStore) RecipientsOf(ctx context.Context, accountID int64, project, channel string) (tidings.Recipients, bool, error) {
	s.reads.Add(1)
	return s.Store.RecipientsOf(ctx, accountID, project, channel)
}

// TestRecipientsCached: a burst of notify events does not read the recipients per
// event: at most once a second (the cache's freshness) while it lasts.
func TestRecipientsCached(t *testing.T) {
	t.Parallel()
	var counting *countingStore
	e, _ := escalation(t, 0, func(s outboxStore) tidings.Store {
		counting = &countingStore{Store: s}
		return counting
	})
	d, _ := e.device(e.user("ada@example.com"))
	const burst = 60
	start := time.Now()
	for i := 0; i < burst; i++ {
		e.publish(tidings.NewEvent{Event: "deploy", Notify: true, Priority: "urgent"})
	}
	for i := 0; i < burst; i++ {
		d.Next(t, 30*time.Second)
	}
	took := time.Since(start)
	// The cache keeps a read for a second, so a burst costs a read or two a second, not
	// one per event. Loose on purpose (a loaded machine stretches the burst and the
	// cache's second): only a cache that does not work fails both bounds.
	if n := counting.reads.Load(); n >= burst/2 && n > 2*int64(took/time.Second)+4 {
		t.Fatalf("%d reads of the recipients for %d events in %v", n, burst, took)
	}
}
