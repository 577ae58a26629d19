package ratelimit

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestKeyedBounded: a million invented keys never hold more than the cap.
func TestKeyedBounded(t *testing.T) {
	k := NewKeyed[string](1000)
	now := time.Unix(0, 0)
	for i := 0; i < 100000; i++ {
		k.Take(fmt.Sprint("attacker-", i, "@example.com"), rate.Every(time.Minute), 5, now)
		if k.Len() > 1000 {
			t.Fatalf("%d buckets after %d keys", k.Len(), i+1)
		}
	}
}

func TestKeyedLimits(t *testing.T) {
	k := NewKeyed[string](10)
	now := time.Unix(0, 0)
	for i := 0; i < 3; i++ {
		if _, ok := k.Take("a", rate.Every(time.Minute), 3, now); !ok {
			t.Fatalf("take %d refused", i)
		}
	}
	if _, ok := k.Take("a", rate.Every(time.Minute), 3, now); ok {
		t.Fatal("fourth take allowed")
	}
	if k.Peek("a", now) || !k.Peek("b", now) {
		t.Fatal("peek")
	}
	if _, ok := k.Take("a", rate.Every(time.Minute), 3, now.Add(time.Minute)); !ok {
		t.Fatal("no refill after a minute")
	}
}

func TestAddrKey(t *testing.T) {
	a := AddrKey(netip.MustParseAddr("2001:db8:1:2:3:4:5:6"))
	b := AddrKey(netip.MustParseAddr("2001:db8:1:2:ffff::1"))
	if a != b {
		t.Fatalf("one /64, two keys: %v %v", a, b)
	}
	if AddrKey(netip.MustParseAddr("::ffff:10.0.0.1")) != AddrKey(netip.MustParseAddr("10.0.0.1")) {
		t.Fatal("mapped IPv4 differs")
	}
}
