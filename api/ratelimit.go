package api

import (
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
)

// Limits configure the token buckets. A rate of 0 turns that limit off.
type Limits struct {
	TokenRate     float64 // requests per second per token
	TokenBurst    int
	PublicIPRate  float64 // per (public token, client IP)
	PublicIPBurst int
}

// DefaultLimits are the limits of the contract.
var DefaultLimits = Limits{TokenRate: 1000, TokenBurst: 2000, PublicIPRate: 10, PublicIPBurst: 20}

type bucketKey struct {
	token string
	ip    netip.Addr // zero for the per-token bucket
}

// limiter holds one token bucket per key; idle full buckets are swept away. In a
// cluster of n instances each keeps 1/n of every rate and burst: the load balancer
// spreads a client's requests, so the cluster as a whole allows the configured limit.
type limiter struct {
	cfg       Limits
	shares    int // instances sharing the limits (1 alone)
	mu        sync.Mutex
	buckets   map[bucketKey]*rate.Limiter
	lastSweep time.Time
}

func newLimiter(cfg Limits) *limiter {
	return &limiter{cfg: cfg, shares: 1, buckets: map[bucketKey]*rate.Limiter{}}
}

// share is this instance's part of a rate and burst.
func (l *limiter) share(r float64, burst int) (float64, int) {
	return r / float64(l.shares), max(1, int(math.Ceil(float64(burst)/float64(l.shares))))
}

// setShares divides the limits between n instances from now on, buckets that exist
// included.
func (l *limiter) setShares(n int, now time.Time) {
	n = max(n, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if n == l.shares {
		return
	}
	l.shares = n
	for k, b := range l.buckets {
		r, burst := l.cfg.TokenRate, l.cfg.TokenBurst
		if k.ip.IsValid() {
			r, burst = l.cfg.PublicIPRate, l.cfg.PublicIPBurst
		}
		r, burst = l.share(r, burst)
		b.SetLimitAt(now, rate.Limit(r))
		b.SetBurstAt(now, burst)
	}
}

type verdict struct {
	limit, remaining int
	reset, retry     time.Duration
	ok               bool
	perVisitor       bool // the bucket of (public token, client address)
}

func (l *limiter) take(key bucketKey, r float64, burst int, now time.Time) verdict {
	r, burst = l.share(r, burst)
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(r), burst)
		l.buckets[key] = b
	}
	ok := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	v := verdict{limit: burst, remaining: max(0, int(math.Floor(tokens))), ok: ok}
	v.reset = time.Duration((float64(burst) - tokens) / r * float64(time.Second))
	if !ok {
		v.retry = time.Duration((1 - tokens) / r * float64(time.Second))
	}
	return v
}

// allow spends one request from the token's bucket and, for a public token, from the
// bucket of (token, client IP). It sets the RateLimit-* headers of the tighter one.
func (l *limiter) allow(w http.ResponseWriter, tok *tidings.Token, ip netip.Addr, now time.Time) error {
	_, err := l.allowN(w, tok, ip, now, 1)
	return err
}

// allowN spends up to n requests, one at a time, and stops at the first the buckets
// refuse: a batch's events are counted one by one. It returns how many were allowed and,
// when fewer than n, the refusal; the headers say the buckets' state after.
func (l *limiter) allowN(w http.ResponseWriter, tok *tidings.Token, ip netip.Addr, now time.Time, n int) (int, error) {
	l.mu.Lock()
	var vs []verdict
	granted := 0
	for granted < n {
		vs = vs[:0]
		if l.cfg.TokenRate > 0 {
			vs = append(vs, l.take(bucketKey{token: tok.ID}, l.cfg.TokenRate, l.cfg.TokenBurst, now))
		}
		if tok.Access == tidings.AccessPublic && l.cfg.PublicIPRate > 0 {
			v := l.take(bucketKey{token: tok.ID, ip: ip}, l.cfg.PublicIPRate, l.cfg.PublicIPBurst, now)
			v.perVisitor = true
			vs = append(vs, v)
		}
		if slices.ContainsFunc(vs, func(v verdict) bool { return !v.ok }) {
			break
		}
		granted++
	}
	l.sweepLocked(now)
	l.mu.Unlock()
	if len(vs) == 0 {
		return n, nil
	}
	tight := vs[0]
	for _, v := range vs[1:] {
		if !v.ok && tight.ok || v.ok == tight.ok && v.remaining < tight.remaining {
			tight = v
		}
	}
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(tight.limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(tight.remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(tight.reset)))
	if !tight.ok {
		h.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(tight.retry))))
		if tight.perVisitor {
			return granted, tidings.Errorf(tidings.ERateLimited,
				"too many requests from this address with a public token: public tokens are limited per visitor address (%s/s, burst %d), "+
					"for browsers and apps; server-side code should use a Full token (Settings → API). Retry after the time in the Retry-After header",
				strconv.FormatFloat(l.cfg.PublicIPRate, 'f', -1, 64), l.cfg.PublicIPBurst)
		}
		return granted, tidings.Errorf(tidings.ERateLimited, "too many requests with this token; retry after the time in the Retry-After header")
	}
	return granted, nil
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// sweepLocked drops buckets that have refilled completely: they hold no information.
func (l *limiter) sweepLocked(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.buckets, k)
		}
	}
}

// ShareLimits tells the server that n instances (itself included) serve the same
// database: each then allows 1/n of every rate limit and burst, so that the cluster's
// total stays within the configured limits.
func (s *Server) ShareLimits(n int) { s.limits.setShares(n, s.now()) }
