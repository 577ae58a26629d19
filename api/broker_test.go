package api_test

import (
	"testing"
	"time"
)

// TestAnnouncesCommittedChanges: the live feed, insight board and push delivery learn
// of events and insight changes through the broker, after they are committed.
func TestAnnouncesCommittedChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	sub := e.broker.Subscribe(e.acme.ID)
	defer sub.Close()
	other := e.broker.Subscribe(e.acme.ID + 1000)
	defer other.Close()

	e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"notify": true}))
	e.do("POST", "/v1/insight", e.full, `{"project":"my-saas","title":"Signups","value":1,"change":"increment"}`)
	e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"channel": "nope"})) // refused: no notice

	for i, want := range []string{"event", "insight"} {
		select {
		case n := <-sub.C():
			switch {
			case want == "event" && (n.Event == nil || !n.Event.Notify || n.Event.ID == ""):
				t.Fatalf("notice %d = %+v", i, n)
			case want == "insight" && (n.Insight == nil || n.Insight.Value != "1"):
				t.Fatalf("notice %d = %+v", i, n)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s notice", want)
		}
	}
	select {
	case n := <-sub.C():
		t.Fatalf("a refused request was announced: %+v", n)
	case n := <-other.C():
		t.Fatalf("another account was told: %+v", n)
	case <-time.After(50 * time.Millisecond):
	}
}
