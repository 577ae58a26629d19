package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/ratelimit"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestLimiterVisitorFirst: a visitor hammering a public token is refused by its own
// bucket, and its refusals cost the token nothing: another visitor still gets through.
// (The token's bucket used to be spent first and never given back: 60 requests from
// one address locked a token of rate 20 out for everyone.)
func TestLimiterVisitorFirst(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) // a stopped clock: nothing refills
	l := newLimiter(Limits{TokenRate: 20, TokenBurst: 40, PublicIPRate: 1, PublicIPBurst: 5})
	pub := &tidings.Token{ID: "pub", Access: tidings.AccessPublic}
	abuser, visitor := netip.MustParseAddr("203.0.113.66"), netip.MustParseAddr("198.51.100.7")
	ok := 0
	for range 10000 {
		if l.allow(httptest.NewRecorder(), pub, abuser, now) == nil {
			ok++
		}
	}
	if ok != 5 {
		t.Fatalf("the abuser was allowed %d requests, want its burst, 5", ok)
	}
	w := httptest.NewRecorder()
	if err := l.allow(w, pub, visitor, now); err != nil {
		t.Fatalf("another visitor: %v", err)
	}
	// The token spent 6 of 40: the abuser's refusals cost it nothing.
	if got := l.tokens["pub"].TokensAt(now); got != 34 {
		t.Fatalf("the token's bucket holds %v, want 34", got)
	}
	if w.Header().Get("RateLimit-Limit") != "5" || w.Header().Get("RateLimit-Remaining") != "4" {
		t.Fatalf("headers %v: the visitor's bucket is the tighter", w.Header())
	}
}

// TestLimiterTokenRefusalKeepsVisitor: when the token's bucket refuses, the visitor's
// is not spent (it is asked first, and spent only once the token's allowed).
func TestLimiterTokenRefusalKeepsVisitor(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	l := newLimiter(Limits{TokenRate: 1, TokenBurst: 3, PublicIPRate: 1, PublicIPBurst: 10})
	pub := &tidings.Token{ID: "pub", Access: tidings.AccessPublic}
	ip := netip.MustParseAddr("198.51.100.7")
	for i := range 3 {
		if err := l.allow(httptest.NewRecorder(), pub, netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), now); err != nil {
			t.Fatal(err)
		}
	}
	w := httptest.NewRecorder()
	if err := l.allow(w, pub, ip, now); tidings.ErrorCode(err) != tidings.ERateLimited {
		t.Fatalf("the token's bucket is empty: %v", err)
	}
	if got := l.visitors[visitorKey{"pub", ratelimit.AddrKey(ip)}].TokensAt(now); got != 10 {
		t.Fatalf("the visitor's bucket holds %v after the token refused, want 10", got)
	}
	if w.Header().Get("RateLimit-Limit") != "3" {
		t.Fatalf("headers %v: the refusing bucket is the token's", w.Header())
	}
}

// TestLimiterBatch: a batch spends one per event from both buckets and stops at the
// first refusal, whichever bucket refuses.
func TestLimiterBatch(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		limits Limits
		want   int
		limit  string // RateLimit-Limit: the refusing bucket's burst
	}{
		{"visitor refuses", Limits{TokenRate: 1, TokenBurst: 100, PublicIPRate: 1, PublicIPBurst: 7}, 7, "7"},
		{"token refuses", Limits{TokenRate: 1, TokenBurst: 4, PublicIPRate: 1, PublicIPBurst: 50}, 4, "4"},
		{"no limits", Limits{}, 20, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLimiter(c.limits)
			pub := &tidings.Token{ID: "pub", Access: tidings.AccessPublic}
			w := httptest.NewRecorder()
			got, err := l.allowN(w, pub, netip.MustParseAddr("2001:db8::1"), now, 20)
			if got != c.want || (got < 20) != (err != nil) || w.Header().Get("RateLimit-Limit") != c.limit {
				t.Fatalf("allowed %d (%v) %v, want %d", got, err, w.Header(), c.want)
			}
			if c.limits.TokenRate > 0 && l.tokens["pub"].TokensAt(now) != float64(c.limits.TokenBurst-got) {
				t.Fatalf("the token spent %v for %d allowed", float64(c.limits.TokenBurst)-l.tokens["pub"].TokensAt(now), got)
			}
		})
	}
}

// TestLimiterVisitorsBounded: however many addresses knock, the visitors' buckets stay
// within the cap, and a visitor hammering the token all along stays limited while
// others come and go.
func TestLimiterVisitorsBounded(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	l := newLimiter(Limits{TokenRate: 1e6, TokenBurst: 1e6, PublicIPRate: 1, PublicIPBurst: 3})
	l.maxVisitors = 100
	pub := &tidings.Token{ID: "pub", Access: tidings.AccessPublic}
	abuser := netip.MustParseAddr("203.0.113.66")
	abused := 0
	for i := range 50000 {
		// A new /64 each time (an IPv6 attacker), and now and then an IPv4 address.
		ip := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 15: 1})
		if i%3 == 0 {
			ip = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		}
		if err := l.allow(httptest.NewRecorder(), pub, ip, now); err != nil {
			t.Fatalf("visitor %d (%s), new: %v", i, ip, err)
		}
		if l.allow(httptest.NewRecorder(), pub, abuser, now) == nil {
			abused++
		}
		if n := len(l.visitors); n > l.maxVisitors {
			t.Fatalf("after %d visitors, %d buckets: over the cap of %d", i+1, n, l.maxVisitors)
		}
	}
	// The abuser's bucket, empty, is never the fullest of a sample (the others hold 2
	// of 3): it is never evicted, and the abuser got its burst and no more.
	if abused != 3 {
		t.Fatalf("the abuser got %d requests through, want its burst, 3", abused)
	}
}

// TestLimiterIPv6PerNetwork: IPv6 addresses of one /64 are one visitor (one host has
// billions); another /64 is another visitor.
func TestLimiterIPv6PerNetwork(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	l := newLimiter(Limits{PublicIPRate: 1, PublicIPBurst: 2})
	pub := &tidings.Token{ID: "pub", Access: tidings.AccessPublic}
	for i, c := range []struct {
		ip string
		ok bool
	}{{"2001:db8:1:2::1", true}, {"2001:db8:1:2::2", true}, {"2001:db8:1:2:ffff::3", false}, {"2001:db8:1:3::1", true}} {
		if err := l.allow(httptest.NewRecorder(), pub, netip.MustParseAddr(c.ip), now); (err == nil) != c.ok {
			t.Fatalf("request %d from %s: %v, want allowed %v", i, c.ip, err, c.ok)
		}
	}
}
