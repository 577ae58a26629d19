package tidings

import "testing"

func TestEventQueryMatches(t *testing.T) {
	ev := &Event{Channel: "payments", Event: "New Subscription", Description: "Plan upgraded",
		Tags: Tags{{Key: "plan", Kind: KindString, Value: "premium"}, {Key: "seats", Kind: KindNumber, Value: "3"}}}
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
		{EventQuery{Text: "SUBSCRIPTION"}, true},
		{EventQuery{Text: "upgraded"}, true},
		{EventQuery{Text: "refund"}, false},
	} {
		if got := c.q.Matches(ev); got != c.want {
			t.Errorf("%+v: %v, want %v", c.q, got, c.want)
		}
	}
}
