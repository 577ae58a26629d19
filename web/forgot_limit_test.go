package web

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestForgotLimiter, on a fixed clock: invented emails from one address make at most
// the address's burst of buckets; an email is refused after three requests from
// anywhere; invented addresses and emails from everywhere never grow the maps past
// their caps; and the buckets refill.
func TestForgotLimiter(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	l := newForgotLimiter()
	attacker := netip.MustParseAddr("203.0.113.7")
	allowed := 0
	for i := range 1000 {
		if l.allow(attacker, fmt.Sprintf("guess-%d@example.com", i), now) {
			allowed++
		}
	}
	if allowed != 10 || l.byAddr.Len() != 1 || l.byEmail.Len() != 10 {
		t.Fatalf("1000 emails from one address: %d allowed, buckets %d/%d", allowed, l.byAddr.Len(), l.byEmail.Len())
	}

	l = newForgotLimiter()
	for i := range 5 {
		ip := netip.AddrFrom4([4]byte{198, 51, 100, byte(i)})
		if got, want := l.allow(ip, "ada@example.com", now), i < 3; got != want {
			t.Fatalf("request %d for ada from its own address: %v, want %v", i+1, got, want)
		}
	}
	if !l.allow(attacker, "ada@example.com", now.Add(10*time.Minute)) {
		t.Fatal("ada is still refused ten minutes later")
	}

	// Blow the maps: an address and an email each, more than the caps.
	l = newForgotLimiter()
	for i := range maxAddrBuckets + 5000 {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.allow(ip, fmt.Sprintf("e%d@example.com", i), now)
	}
	if l.byAddr.Len() > maxAddrBuckets || l.byEmail.Len() > maxEmailBuckets {
		t.Fatalf("buckets %d/%d, caps %d/%d", l.byAddr.Len(), l.byEmail.Len(), maxAddrBuckets, maxEmailBuckets)
	}
	if l.byAddr.Len() == 0 || l.byEmail.Len() == 0 {
		t.Fatal("no buckets at all: the limiter keeps nothing")
	}
}
