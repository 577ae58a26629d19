package deliver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/deliver"
)

// next8 is the first 08:00 in loc after t.
func next8(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	at := time.Date(l.Year(), l.Month(), l.Day(), tidings.DigestHour, 0, 0, 0, loc)
	if !at.After(t) {
		at = at.AddDate(0, 0, 1)
	}
	return at
}

// TestDigestScheduled: two runners on one clock, two members in two time zones with a
// daily digest. At start each member's last finished period is claimed, and, with
// nothing in it, nothing is mailed; when the clock passes 08:00 in one zone only that
// member gets the digest of the day that ended (its events, in their zone); then the
// other; each period once, whichever runner claimed it, however often they look.
func TestDigestScheduled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	berlin, err1 := time.LoadLocation("Europe/Berlin")
	york, err2 := time.LoadLocation("America/New_York")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	ada := &tidings.User{AccountID: e.account.ID, Email: "ada@example.com", PasswordHash: "x", Role: tidings.UserMember}
	bob := &tidings.User{AccountID: e.account.ID, Email: "bob@example.com", PasswordHash: "x", Role: tidings.UserMember}
	for u, zone := range map[*tidings.User]string{ada: "Europe/Berlin", bob: "America/New_York"} {
		e.must(e.store.CreateUser(ctx, u))
		e.must(e.store.SetNotifyPrefs(ctx, u.ID, &tidings.NotifyPrefs{TimeZone: zone}))
		e.must(e.store.SetDigest(ctx, e.account.ID, u.ID, "my-saas", tidings.DigestDaily))
	}
	for i := 0; i < 3; i++ {
		e.publish(tidings.NewEvent{Event: "New Subscription", Icon: "💰"})
	}
	now := time.Now()
	first, second := next8(now, berlin), next8(now, york)
	firstTo, secondTo := ada, bob
	if second.Before(first) {
		first, second, firstTo, secondTo = second, first, bob, ada
	}

	box, clk := newMailbox(), &clock{}
	clk.Advance(first.Add(-2 * time.Minute).Sub(now)) // before either 08:00
	for range 2 {
		e.run(deliver.Config{Mailer: box, PublicURL: publicURL, Now: clk.Now})
	}
	lastPeriods := func() map[int64]time.Time {
		prefs, err := e.store.ListDigests(ctx)
		e.must(err)
		out := map[int64]time.Time{}
		for _, p := range prefs {
			out[p.UserID] = p.LastPeriod
		}
		return out
	}
	waitFor(t, func() bool { // the periods that ended before: claimed, empty
		lp := lastPeriods()
		return lp[ada.ID].Equal(next8(now, berlin).AddDate(0, 0, -1)) && lp[bob.ID].Equal(next8(now, york).AddDate(0, 0, -1))
	})
	e.settled(0)
	box.quiet(t, pollQuiet)

	check := func(to *tidings.User, end time.Time) {
		t.Helper()
		m := box.next(t)
		zone := map[int64]string{ada.ID: "Europe/Berlin", bob.ID: "America/New_York"}[to.ID]
		if m.To != to.Email || m.Subject != "Daily digest of my-saas: 3 events" || !strings.Contains(m.Text, "#payments: 3") ||
			!strings.Contains(m.Text, "💰 New Subscription: 3") || !strings.Contains(m.Text, "08:00 ("+zone+")") ||
			m.MessageID == "" || !strings.HasPrefix(m.MessageID, "<digest.") {
			t.Fatalf("digest to %s %q %q:\n%s", m.To, m.Subject, m.MessageID, m.Text)
		}
		waitFor(t, func() bool { return lastPeriods()[to.ID].Equal(end) })
		e.settled(0) // before the clock moves on past the lease of a job under way
	}
	clk.Advance(3 * time.Minute) // past the first 08:00
	check(firstTo, first)
	box.quiet(t, pollQuiet)
	clk.Advance(second.Sub(first)) // past the second
	check(secondTo, second)
	for range 3 { // the schedulers look again: nothing is queued twice
		clk.Advance(2 * time.Minute)
		box.quiet(t, pollQuiet)
		e.settled(0)
	}
	e.settled(0)
}
