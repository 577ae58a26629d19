package web

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestLoginLimiter, on a fixed clock: the per-address limit comes first, so invented
// emails from one address make at most a burst of buckets (the first audit grew the
// process by hundreds of MB); failures lock an email out only from the network that
// failed (the second audit: five wrong passwords from anywhere locked the owner out),
// and many failures from many networks slow every attempt without refusing any.
func TestLoginLimiter(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	l := newLoginLimiter()
	attacker := netip.MustParseAddr("203.0.113.7")
	refused := 0
	for i := range 60 {
		email := fmt.Sprintf("guess-%d@example.com", i)
		if l.allow(attacker, email, now) == loginRefused {
			refused++
			continue
		}
		l.failed(attacker, email, now)
	}
	if refused != 50 || l.byAddr.Len() != 1 || l.byEmailNet.Len() != 10 || l.byEmail.Len() != 10 {
		t.Fatalf("60 invented emails from one address: %d refused, buckets %d/%d/%d", refused, l.byAddr.Len(), l.byEmailNet.Len(), l.byEmail.Len())
	}

	l = newLoginLimiter()
	owner := netip.MustParseAddr("198.51.100.20")
	for i := range 5 {
		if got := l.allow(attacker, "ada@example.com", now); got != loginAllowed {
			t.Fatalf("attempt %d from the attacker: %d", i+1, got)
		}
		l.failed(attacker, "ada@example.com", now)
	}
	if got := l.allow(attacker, "ada@example.com", now); got != loginRefused {
		t.Fatalf("a sixth wrong password from the same network: %d, want refused", got)
	}
	if got := l.allow(netip.MustParseAddr("203.0.113.7"), "bob@example.com", now); got != loginAllowed {
		t.Fatalf("another email from that network: %d", got)
	}
	if got := l.allow(owner, "ada@example.com", now); got != loginAllowed {
		t.Fatalf("the owner from a network that never failed: %d, want allowed", got)
	}
	// Failures from 40 networks: the email slows down everywhere, refused nowhere new.
	for i := range 40 {
		ip := netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})
		if l.allow(ip, "ada@example.com", now) == loginRefused {
			t.Fatalf("network %d refused before it failed", i)
		}
		l.failed(ip, "ada@example.com", now)
	}
	if got := l.allow(owner, "ada@example.com", now); got != loginSlowed {
		t.Fatalf("the owner after failures from 40 networks: %d, want slowed (not refused)", got)
	}
	// Two minutes later the failing network may try again.
	if got := l.allow(attacker, "ada@example.com", now.Add(2*time.Minute)); got == loginRefused {
		t.Fatal("the failing network is still refused after two minutes")
	}
}
