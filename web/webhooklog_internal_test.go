package web

import (
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// TestGroupAttempts: attempts fold by message, newest first; a message's line says how
// it ended: delivered (after retries), retried next (when), or given up.
func TestGroupAttempts(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(msg string, try, status int, err string) attemptRow {
		return attemptRow{WebhookAttempt: &tidings.WebhookAttempt{MessageID: msg, Attempt: try, Status: status, Error: err,
			At: now.Add(-time.Duration(10-try) * time.Minute)}}
	}
	attempts := []attemptRow{ // newest first, as the store lists them
		at("dns", 20, 0, "DNS error"), at("late", 3, 200, ""), at("dns", 19, 0, "DNS error"),
		at("late", 2, 503, "503 Service Unavailable"), at("final", 1, 404, "404 Not Found"), at("late", 1, 500, ""),
		at("once", 1, 204, ""), at("soon", 1, 502, ""),
	}
	retries := map[string]time.Time{"dns": now.Add(4*time.Minute + 10*time.Second), "soon": now.Add(-time.Second)}
	got := groupAttempts(attempts, retries, now)
	want := []struct {
		msg, state, result string
		folded             int
	}{
		{"dns", "retrying", "failed 20 times: DNS error, next retry in 4 min", 2},
		{"late", "ok", "delivered after 3 attempts", 3},
		{"final", "failed", "failed: 404 Not Found, gave up", 1},
		{"once", "ok", "delivered", 1},
		{"soon", "retrying", "failed: HTTP 502, next retry now", 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Latest.MessageID != w.msg || g.State != w.state || g.Result != w.result || len(g.Attempts) != w.folded {
			t.Errorf("group %d = %s %s %q (%d attempts), want %s %s %q (%d)", i, g.Latest.MessageID, g.State, g.Result, len(g.Attempts),
				w.msg, w.state, w.result, w.folded)
		}
	}
}

func TestUntil(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{-time.Minute: "now", 45 * time.Second: "in less than a minute",
		4*time.Minute + 20*time.Second: "in 4 min", 90 * time.Minute: "in 2 h", 30 * time.Hour: "on 23 Nov 18:00 UTC"} {
		if got := until(now.Add(d), now); got != want {
			t.Errorf("until(+%v) = %q, want %q", d, got, want)
		}
	}
}
