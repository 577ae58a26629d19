package deliver_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pushtest"
)

// TestWhoGetsWhat crosses who is notified (everyone, chosen members, nobody) with each
// member's routes (push, email, both, none, a channel's own), choices (a mute, quiet
// hours, "urgent only") and the event's priority, and for an urgent event the
// escalation to every member a minute later: which devices and mailboxes get what, as
// the records say and as the devices and the mailbox saw it.
func TestWhoGetsWhat(t *testing.T) {
	t.Parallel()
	e := newMailEnv(t, newMailbox(), true)
	ctx := context.Background()
	e.must(e.store.SetRepeatUrgent(ctx, e.account.ID, "my-saas", time.Minute, 0))
	e.must(e.store.SetEscalation(ctx, e.account.ID, "my-saas", time.Minute))

	type member struct {
		user        *tidings.User
		dev         *pushtest.Device
		sub         *tidings.PushSubscription
		push, email bool
		pushes      int // the pushes and mails its records say were sent
		mails       int
	}
	routes := map[string]string{"plain": "push,email", "pushy": "push", "mailer": "email", "none": "none",
		"muter": "push,email", "night": "push,email", "urgent": "push,email", "chan": "none"}
	members := map[string]*member{}
	for name, by := range routes {
		m := &member{user: e.member(name+"@example.com", by)}
		m.dev, m.sub = e.device(m.user)
		r, _ := tidings.ParseRoutes(by)
		m.push, m.email = r.Push, r.Email
		members[name] = m
	}
	// chan chose nothing for the project but email for its channel.
	e.must(e.store.SetRoutes(ctx, e.account.ID, members["chan"].user.ID, "my-saas", "payments", &tidings.Routes{Email: true}))
	members["chan"].email = true
	e.must(e.store.SetNotifyPrefs(ctx, members["muter"].user.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas/payments"}}))
	now := e.clk.Now().UTC()
	start := (now.Hour()*60 + now.Minute() + 1440 - 60) % 1440
	e.must(e.store.SetNotifyPrefs(ctx, members["night"].user.ID, &tidings.NotifyPrefs{QuietStart: start, QuietEnd: (start + 240) % 1440, TimeZone: "UTC"}))
	e.must(e.store.SetNotifyPrefs(ctx, members["urgent"].user.ID, &tidings.NotifyPrefs{UrgentOnly: []string{"my-saas"}}))

	// want is a member's record for a device or a mailbox ("" none): routes first, then
	// recipients (until an escalation), then their choices.
	want := func(name string, mail, recipient, urgent, escalated bool) string {
		m := members[name]
		switch {
		case mail && !m.email, !mail && !m.push:
			return ""
		case !recipient && !escalated:
			return tidings.PushNotRecipient
		case name == "muter", name == "urgent" && !urgent:
			return tidings.PushMuted
		case name == "night" && !urgent:
			return tidings.PushQuiet
		}
		return tidings.PushSent
	}
	settle := func(ev *tidings.Event, expect map[string]string) {
		t.Helper()
		var got map[string]string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			recs, err := e.store.EventPushes(ctx, e.account.ID, ev.ID)
			e.must(err)
			got = map[string]string{}
			for _, r := range recs {
				got[r.SubscriptionID] = r.Status
			}
			if maps.Equal(got, expect) {
				return
			}
		}
		name := func(target string) string {
			for n, m := range members {
				if m.sub.ID == target {
					return n + "'s device"
				}
				if tidings.MailTarget(m.user.ID) == target {
					return n + "'s mail"
				}
			}
			return target
		}
		keys := maps.Clone(got)
		maps.Copy(keys, expect)
		var diff []string
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if got[k] != expect[k] {
				diff = append(diff, fmt.Sprintf("%s: %q, want %q", name(k), got[k], expect[k]))
			}
		}
		t.Fatalf("%s: records differ:\n%s", ev.Event, strings.Join(diff, "\n"))
	}

	// The clock moves on only when the outbox holds what waits for later (the
	// quiet-hours summaries, an escalation): never past the lease of a job under way.
	waiting := 0
	all := slices.Sorted(maps.Keys(members))
	for _, c := range []struct {
		name      string
		notify    string
		notified  []string
		escalates bool
	}{
		{"everyone", "everyone", all, false},
		{"chosen members", "plain@example.com,pushy@example.com,mailer@example.com,night@example.com,none@example.com", []string{"plain", "pushy", "mailer", "night", "none"}, true},
		{"nobody", "nobody", nil, true},
	} {
		e.must(e.store.SetRecipients(ctx, e.account.ID, "my-saas", "", recipients(t, c.notify)))
		e.settled(waiting)
		e.clk.Advance(2 * time.Second) // past the caches' second
		for _, urgent := range []bool{false, true} {
			priority := map[bool]string{false: "default", true: "urgent"}[urgent]
			ev := e.publish(tidings.NewEvent{Event: c.name + ", " + priority, Notify: true, Priority: priority})
			expect := func(escalated bool) map[string]string {
				out := map[string]string{}
				for name, m := range members {
					recipient := slices.Contains(c.notified, name)
					if s := want(name, false, recipient, urgent, escalated); s != "" {
						out[m.sub.ID] = s
					}
					if s := want(name, true, recipient, urgent, escalated); s != "" {
						out[tidings.MailTarget(m.user.ID)] = s
					}
				}
				return out
			}
			final := expect(false)
			settle(ev, final)
			if slices.Contains(slices.Collect(maps.Values(final)), tidings.PushQuiet) {
				waiting = 2 // night's summaries, of push and of mail
			}
			if urgent && c.escalates {
				e.settled(waiting + 1)
				e.clk.Advance(time.Minute + time.Second)
				final = expect(true)
				settle(ev, final)
			}
			for _, m := range members {
				if final[m.sub.ID] == tidings.PushSent {
					m.pushes++
				}
				if final[tidings.MailTarget(m.user.ID)] == tidings.PushSent {
					m.mails++
				}
			}
		}
	}
	// Each device and mailbox had exactly what its records say was sent.
	mails := map[string]int{}
	for _, m := range e.box.tries() {
		mails[m.To]++
	}
	for name, m := range members {
		if n := len(m.dev.Drain(300 * time.Millisecond)); n != m.pushes {
			t.Errorf("%s's device had %d pushes, its records say %d", name, n, m.pushes)
		}
		if mails[m.user.Email] != m.mails {
			t.Errorf("%s had %d mails, its records say %d", name, mails[m.user.Email], m.mails)
		}
	}
}
