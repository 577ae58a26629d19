package deliver_test

import (
	"context"
	"maps"
	"slices"
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

// nextMonday8 is the first Monday 08:00 in loc after t.
func nextMonday8(t time.Time, loc *time.Location) time.Time {
	at := next8(t, loc)
	for at.Weekday() != time.Monday {
		at = at.AddDate(0, 0, 1)
	}
	return at
}

// TestDigestScheduled: two runners on one clock, two members in two time zones with a
// daily digest and a third with a weekly one. At start each member's last finished
// period is claimed, and, with nothing in it, nothing is mailed; when the clock passes
// 08:00 in one zone only that member gets the digest of the day that ended (its
// events, in their zone); then the other; the weekly member gets theirs when the clock
// passes Monday 08:00 in their zone, of the week that ended; each period once,
// whichever runner claimed it, however often they look.
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
	carol := &tidings.User{AccountID: e.account.ID, Email: "carol@example.com", PasswordHash: "x", Role: tidings.UserMember}
	zones := map[*tidings.User]string{ada: "Europe/Berlin", bob: "America/New_York", carol: "Europe/Berlin"}
	for u, zone := range zones {
		every := tidings.DigestDaily
		if u == carol {
			every = tidings.DigestWeekly
		}
		e.must(e.store.CreateUser(ctx, u))
		e.must(e.store.SetNotifyPrefs(ctx, u.ID, &tidings.NotifyPrefs{TimeZone: zone}))
		e.must(e.store.SetDigest(ctx, e.account.ID, u.ID, "my-saas", every))
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
	// Carol's week ends at the next Monday 08:00 in Berlin: with ada's day, when that
	// is a Monday, else later.
	week := nextMonday8(now, berlin)

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
		return lp[ada.ID].Equal(next8(now, berlin).AddDate(0, 0, -1)) && lp[bob.ID].Equal(next8(now, york).AddDate(0, 0, -1)) &&
			lp[carol.ID].Equal(week.AddDate(0, 0, -7))
	})
	e.settled(0)
	box.quiet(t, pollQuiet)

	// check takes the digests due at end, in whatever order they come.
	check := func(end time.Time, to ...*tidings.User) {
		t.Helper()
		want := map[string]*tidings.User{}
		for _, u := range to {
			want[u.Email] = u
		}
		for range to {
			m := box.next(t)
			u := want[m.To]
			if u == nil {
				t.Fatalf("a digest to %s, want one to each of %v", m.To, slices.Collect(maps.Keys(want)))
			}
			delete(want, m.To)
			kind, period := "Daily", end.AddDate(0, 0, -1)
			if u == carol {
				kind, period = "Weekly", end.AddDate(0, 0, -7)
			}
			loc, _ := time.LoadLocation(zones[u])
			if m.Subject != kind+" digest of my-saas: 3 events" || !strings.Contains(m.Text, "#payments: 3") ||
				!strings.Contains(m.Text, "💰 New Subscription: 3") ||
				!strings.Contains(m.Text, period.In(loc).Format("Mon 2 Jan 15:04")+" – "+end.In(loc).Format("Mon 2 Jan 15:04")+" ("+zones[u]+")") ||
				m.MessageID == "" || !strings.HasPrefix(m.MessageID, "<digest.") {
				t.Fatalf("digest to %s %q %q:\n%s", m.To, m.Subject, m.MessageID, m.Text)
			}
			waitFor(t, func() bool { return lastPeriods()[u.ID].Equal(end) })
		}
		e.settled(0) // before the clock moves on past the lease of a job under way
	}
	with := func(end time.Time, u *tidings.User) []*tidings.User {
		if u == ada && week.Equal(end) {
			return []*tidings.User{ada, carol}
		}
		return []*tidings.User{u}
	}
	clk.Advance(3 * time.Minute) // past the first 08:00
	check(first, with(first, firstTo)...)
	box.quiet(t, pollQuiet)
	clk.Advance(second.Sub(first)) // past the second
	check(second, with(second, secondTo)...)
	if week.After(second) {
		box.quiet(t, pollQuiet) // carol's week has not ended yet
		// Past the end of carol's week: the days since ada's and bob's were empty.
		clk.Advance(week.Sub(second))
		check(week, carol)
	}
	for range 3 { // the schedulers look again: nothing is queued twice
		clk.Advance(2 * time.Minute)
		box.quiet(t, pollQuiet)
		e.settled(0)
	}
	e.settled(0)
}
