package api

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// The access log of refused requests is aggregated: 85,356 anonymous 401s wrote 12.2 MB
// of log in 3 s, and every 429 was a line too. Of each kind (route and status) the first
// refusal of a period is logged in full, as any request; the others are counted per
// client address, and at the end of the period each client's count is one line:
//
//	msg="refused requests" route="POST /v1/log" status=401 client=203.0.113.9 count=9999 period=1s
//
// The counts are bounded: past refusedClients clients in a period, the rest of a kind
// fold into one line with client=other. A server that stops writes the counts of the
// period under way (close).

// refusedPeriod is how long refusals are counted before their lines are written.
const refusedPeriod = time.Second

// refusedClients bounds the clients counted apart in a period.
const refusedClients = 64

// refusedStatus tells the answers that are aggregated: a missing or wrong token (401),
// a token without the right (403), a body over the limit (413), a rate limit (429), and
// any other 4xx to a request of no account (a scanner's 404s and 405s, a bad form
// before sign-in). Anyone can cause these as fast as they can send, and one line says
// what the next 10,000 would. A 4xx of an authenticated account is its own mistake,
// bounded by its token's rate limit, and logged in full.
func refusedStatus(status int, authenticated bool) bool {
	switch status {
	case 401, 403, 413, 429:
		return true
	}
	return status >= 400 && status < 500 && !authenticated
}

type refusedKind struct {
	route  string
	status int
}

type refusedKey struct {
	refusedKind
	client string
}

// refusedLog counts refused requests for one period at a time.
type refusedLog struct {
	h      slog.Handler
	now    func() time.Time
	period time.Duration

	writing sync.Mutex // held by a flush while it writes

	mu     sync.Mutex
	closed bool                 // the server stopped: refusals are logged in full
	open   bool                 // a period is under way: its flush is due
	start  time.Time            // its start
	seen   map[refusedKind]bool // kinds whose first refusal of the period was logged
	counts map[refusedKey]int   // the others, per client (at most refusedClients, then "other")
	timer  *time.Timer
}

func newRefusedLog(h slog.Handler, now func() time.Time, period time.Duration) *refusedLog {
	rl := &refusedLog{h: h, now: now, period: period, seen: map[refusedKind]bool{}, counts: map[refusedKey]int{}}
	rl.timer = time.AfterFunc(time.Hour, rl.flush)
	rl.timer.Stop()
	return rl
}

// note counts a refused request, and tells whether it is the first of its kind in the
// period: the caller logs that one in full.
func (rl *refusedLog) note(route string, status int, addr netip.Addr) bool {
	kind := refusedKind{route, status}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.closed {
		return true
	}
	if !rl.open {
		rl.open, rl.start = true, rl.now()
		rl.timer.Reset(rl.period)
	}
	if !rl.seen[kind] {
		rl.seen[kind] = true
		return true
	}
	client := "unknown"
	if addr.IsValid() {
		client = addr.String()
	}
	key := refusedKey{kind, client}
	if _, ok := rl.counts[key]; !ok && len(rl.counts) >= refusedClients {
		key.client = "other"
	}
	rl.counts[key]++
	return false
}

// close writes the counts of the period under way and ends the counting: a refusal
// after it is logged in full. The server calls it once its requests are answered, so
// that the last period's counts are not lost and nothing is written after the log closes.
func (rl *refusedLog) close() {
	rl.mu.Lock()
	rl.closed = true
	rl.timer.Stop()
	rl.mu.Unlock()
	rl.flush()
}

// flush writes the period's counts, one line per kind and client, and ends the period.
// One flush writes at a time: close waits for the timer's, under way.
func (rl *refusedLog) flush() {
	rl.writing.Lock()
	defer rl.writing.Unlock()
	rl.mu.Lock()
	counts, start := rl.counts, rl.start
	rl.open = false
	rl.timer.Stop()
	clear(rl.seen)
	rl.counts = make(map[refusedKey]int, len(counts))
	rl.mu.Unlock()
	if len(counts) == 0 || !rl.h.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	now := rl.now()
	period := now.Sub(start).Round(time.Millisecond)
	for k, n := range counts {
		rec := slog.NewRecord(now, slog.LevelInfo, "refused requests", 0)
		rec.AddAttrs(slog.String("route", k.route), slog.Int("status", k.status), slog.String("client", k.client),
			slog.Int("count", n), slog.Duration("period", period))
		rl.h.Handle(context.Background(), rec)
	}
}
