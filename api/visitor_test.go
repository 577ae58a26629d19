package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

// newEnvProxied is newEnvClock behind a trusted proxy on the loopback address: each
// request's X-Forwarded-For is its visitor.
func newEnvProxied(t *testing.T, limits api.Limits, now func() time.Time) *env {
	t.Helper()
	e := newEnvClock(t, limits, now)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.api = api.New(api.Config{Store: e.store, Broker: e.broker, Logger: log, Limits: limits, Now: now,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}})
	mux := http.NewServeMux()
	e.api.Register(mux)
	mux.Handle("/", e.api.NotFound())
	e.srv = httptest.NewServer(api.Middleware(mux, log, nil))
	t.Cleanup(e.srv.Close)
	return e
}

// TestOneVisitorCannotLockOthersOut: a visitor hammering a public token is refused by
// its own limit, and that costs the token nothing: another visitor is still served.
// (The token's bucket was spent before the visitor's and never given back: 60
// requests from one address locked a token of rate 20 out for every visitor.)
func TestOneVisitorCannotLockOthersOut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) // stopped: nothing refills
	e := newEnvProxied(t, api.Limits{TokenRate: 20, TokenBurst: 20, PublicIPRate: 1, PublicIPBurst: 5}, func() time.Time { return now })
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	body := merge(goodLog, nil)
	ok := 0
	for range 60 {
		r := e.do("POST", "/v1/log", pub, body, "X-Forwarded-For", "203.0.113.66")
		if r.status == 200 {
			ok++
		} else {
			e.want(r, 429, "rate_limited")
		}
	}
	if ok != 5 {
		t.Fatalf("the abuser published %d events, want its burst, 5", ok)
	}
	for _, visitor := range []string{"198.51.100.7", "2001:db8:7::1"} {
		if r := e.do("POST", "/v1/log", pub, body, "X-Forwarded-For", visitor); r.status != 200 {
			t.Fatalf("visitor %s: %d %s", visitor, r.status, r.body)
		}
	}
	// A batch from another visitor: its events count one by one, the visitor's first.
	batch := batchOf(goodLogJSON(), goodLogJSON(), goodLogJSON())
	if r := e.do("POST", "/v1/log/batch", pub, batch, "X-Forwarded-For", "198.51.100.8"); r.status != 200 ||
		r.header.Get("RateLimit-Remaining") != "2" {
		t.Fatalf("batch: %d %v %s", r.status, r.header, r.body)
	}
}

func goodLogJSON() string { return merge(goodLog, nil) }
