package deliver_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// TestEscalationOrder: an urgent event goes to its recipients at once; when nobody
// acknowledged it within the project's EscalateAfter, every other member gets it by
// their routes (a mute still holds, quiet hours do not), their records go from
// not-recipient to sent, and the later repeats reach them too. Acknowledged before
// then: nothing more goes out.
func TestEscalationOrder(t *testing.T) {
	t.Parallel()
	for _, acked := range []bool{false, true} {
		name := map[bool]string{false: "not acknowledged", true: "acknowledged before"}[acked]
		t.Run(name, func(t *testing.T) {
			e := newMailEnv(t, newMailbox(), true)
			ctx := context.Background()
			e.must(e.store.SetRepeatUrgent(ctx, e.account.ID, "my-saas", 2*time.Minute, 1))
			e.must(e.store.SetEscalation(ctx, e.account.ID, "my-saas", time.Minute))
			ada := e.member("ada@example.com", "push")
			bob := e.member("bob@example.com", "push,email")
			carol := e.member("carol@example.com", "email")
			adaDev, adaSub := e.device(ada)
			bobDev, bobSub := e.device(bob)
			now := e.clk.Now().UTC()
			start := (now.Hour()*60 + now.Minute() + 1440 - 60) % 1440
			e.must(e.store.SetNotifyPrefs(ctx, bob.ID, &tidings.NotifyPrefs{QuietStart: start, QuietEnd: (start + 180) % 1440, TimeZone: "UTC"}))
			e.must(e.store.SetNotifyPrefs(ctx, carol.ID, &tidings.NotifyPrefs{Muted: []string{"my-saas"}}))
			e.must(e.store.SetRecipients(ctx, e.account.ID, "my-saas", "", recipients(t, "ada@example.com")))

			ev := e.publish(tidings.NewEvent{Event: "DB down", Notify: true, Priority: "urgent"})
			message(t, adaDev.Next(t, 30*time.Second))
			for target, want := range map[string]string{adaSub.ID: tidings.PushSent, bobSub.ID: tidings.PushNotRecipient,
				tidings.MailTarget(bob.ID): tidings.PushNotRecipient, tidings.MailTarget(carol.ID): tidings.PushNotRecipient} {
				if s := e.record(ev.ID, target); s != want {
					t.Fatalf("before the escalation: %s's record %q, want %q", target, s, want)
				}
			}
			e.settled(2) // the repeat and the escalation
			if acked {
				_, _, err := e.store.AcknowledgeEvent(ctx, e.account.ID, ev.ID, "ada@example.com", e.clk.Now())
				e.must(err)
				adaDev.Next(t, 30*time.Second) // "Acknowledged by"
				// The acknowledgement took the repeat and the escalation along; the clock
				// moves on only then (not past the lease of a job under way).
				e.settled(0)
				e.clk.Advance(3 * time.Minute)
				bobDev.Quiet(t, pollQuiet)
				adaDev.Quiet(t, 10*time.Millisecond)
				e.box.quiet(t, 10*time.Millisecond)
				if s := e.record(ev.ID, bobSub.ID); s != tidings.PushNotRecipient {
					t.Fatalf("bob's record after an acknowledged event %q", s)
				}
				return
			}
			e.clk.Advance(time.Minute + time.Second)
			if m := message(t, bobDev.Next(t, 30*time.Second)); m.EventID != ev.ID || !m.RequireInteraction {
				t.Fatalf("bob's escalated push %+v", m)
			}
			if m := e.box.next(t); m.To != "bob@example.com" || m.Subject != "DB down · #payments" {
				t.Fatalf("escalated mail %q to %s", m.Subject, m.To)
			}
			for target, want := range map[string]string{bobSub.ID: tidings.PushSent, tidings.MailTarget(bob.ID): tidings.PushSent,
				tidings.MailTarget(carol.ID): tidings.PushMuted} {
				if s := e.record(ev.ID, target); s != want {
					t.Fatalf("after the escalation: %s's record %q, want %q", target, s, want)
				}
			}
			adaDev.Quiet(t, 10*time.Millisecond)
			e.settled(1) // the repeat
			e.clk.Advance(time.Minute)
			if m := message(t, adaDev.Next(t, 30*time.Second)); !m.Renotify {
				t.Fatalf("ada's repeat %+v", m)
			}
			if m := message(t, bobDev.Next(t, 30*time.Second)); !m.Renotify {
				t.Fatalf("bob's repeat %+v", m)
			}
			e.settled(0)
			e.box.quiet(t, pollQuiet) // a repeat pushes; it does not mail again
		})
	}
}
