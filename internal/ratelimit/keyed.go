// Package ratelimit keeps token buckets by key in bounded memory: however many keys an
// attacker invents (emails, addresses, tokens), the map never grows past its cap.
package ratelimit

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Keyed holds one token bucket per key, at most max of them.
type Keyed[K comparable] struct {
	mu        sync.Mutex
	max       int
	buckets   map[K]*rate.Limiter
	lastSweep time.Time
}

// NewKeyed returns a Keyed that holds at most max buckets.
func NewKeyed[K comparable](max int) *Keyed[K] {
	return &Keyed[K]{max: max, buckets: map[K]*rate.Limiter{}}
}

// Take spends one token of key's bucket (made with r and burst when new) and reports
// whether it was there. It also returns the bucket, for RateLimit-* headers; read it
// only under the caller's own serialisation, or not at all.
func (k *Keyed[K]) Take(key K, r rate.Limit, burst int, now time.Time) (*rate.Limiter, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.takeLocked(key, r, burst, now)
}

func (k *Keyed[K]) takeLocked(key K, r rate.Limit, burst int, now time.Time) (*rate.Limiter, bool) {
	if now.Sub(k.lastSweep) > time.Minute {
		k.sweepLocked(now)
	}
	b := k.buckets[key]
	if b == nil {
		if len(k.buckets) >= k.max && now.Sub(k.lastSweep) > time.Second {
			k.sweepLocked(now) // at most once a second: a sweep reads every bucket
		}
		for evict := range k.buckets {
			if len(k.buckets) < k.max {
				break
			}
			// Full of buckets still in use: forget one. Its key starts afresh, which
			// is the price of bounded memory; the per-address limits in front of
			// these maps keep that rare.
			delete(k.buckets, evict)
		}
		b = rate.NewLimiter(r, burst)
		k.buckets[key] = b
	}
	return b, b.AllowN(now, 1)
}

// Peek reports whether key's bucket has a token now, without spending it.
func (k *Keyed[K]) Peek(key K, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.buckets[key]
	return b == nil || b.TokensAt(now) >= 1
}

// sweepLocked drops buckets that have refilled completely: they hold no information.
func (k *Keyed[K]) sweepLocked(now time.Time) {
	k.lastSweep = now
	for key, b := range k.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(k.buckets, key)
		}
	}
}

// Len is the number of buckets held.
func (k *Keyed[K]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

// AddrKey is the key of a client address: the address itself for IPv4, its /64 for
// IPv6, where one subscriber commonly holds a whole /64.
func AddrKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}
