package tidings

import (
	"testing"
	"time"
)

func TestEventQueryMatches(t *testing.T) {
	ev := &Event{Channel: "payments", Event: "New Subscription", Description: "Plan upgraded",
		Timestamp: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		Tags:      Tags{{Key: "plan", Kind: KindString, Value: "premium"}, {Key: "seats", Kind: KindNumber, Value: "3"}}}
	for _, c := range []struct {
		q    EventQuery
		want bool
	}{
		{EventQuery{}, true},
		{EventQuery{Channel: "payments"}, true},
		{EventQuery{Channel: "deploys"}, false},
		{EventQuery{Tags: []Tag{{Key: "plan", Value: "premium"}}}, true},
		{EventQuery{Tags: []Tag{{Key: "plan", Value: "premium"}, {Key: "seats", Value: "3"}}}, true},
		{EventQuery{Tags: []Tag{{Key: "plan", Value: "basic"}}}, false},
		{EventQuery{Tags: []Tag{{Key: "country", Value: "de"}}}, false},
		{EventQuery{Terms: []Term{{Words: []string{"subscription"}}}}, true},
		{EventQuery{Terms: []Term{{Words: []string{"upgr"}, Prefix: true}}}, true},
		{EventQuery{Terms: []Term{{Words: []string{"premium"}}}}, true}, // a tag's value
		{EventQuery{Terms: []Term{{Words: []string{"refund"}}}}, false},
		{EventQuery{Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, true},
		{EventQuery{Since: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}, false},
		{EventQuery{Until: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}, false},
		{EventQuery{Until: time.Date(2026, 1, 1, 12, 0, 1, 0, time.UTC)}, true},
	} {
		if got := c.q.Matches(ev); got != c.want {
			t.Errorf("%+v: %v, want %v", c.q, got, c.want)
		}
	}
}

// TestShouldPush: notify asks for a push, unless the event is a backfill more than an
// hour old — that must not wake anyone.
func TestShouldPush(t *testing.T) {
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		notify bool
		age    time.Duration
		want   bool
	}{
		{true, 0, true},
		{true, 59 * time.Minute, true},
		{true, time.Hour, true},
		{true, time.Hour + time.Second, false},
		{true, 30 * 24 * time.Hour, false},
		{false, 0, false},
		{true, -time.Minute, true}, // a clock a little ahead
	} {
		ev := &Event{Notify: c.notify, Timestamp: now.Add(-c.age)}
		if got := ev.ShouldPush(now); got != c.want {
			t.Errorf("notify=%v age=%v: %v, want %v", c.notify, c.age, got, c.want)
		}
	}
}

// TestEventIDFloor: IDs made at or after t sort above the floor of t, IDs of earlier
// milliseconds below it.
func TestEventIDFloor(t *testing.T) {
	before, _ := NewEventID()
	time.Sleep(2 * time.Millisecond)
	now := time.Now()
	floor := EventIDFloor(now)
	after, _ := NewEventID()
	if !(before < floor && floor <= after) {
		t.Fatalf("before %s, floor %s, after %s", before, floor, after)
	}
	if len(floor) != len(after) || floor[14] != '7' {
		t.Fatalf("floor %s does not have the shape of a UUIDv7", floor)
	}
}
