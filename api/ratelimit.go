package api

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/ratelimit"
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

// MaxVisitorBuckets caps the buckets of (public token, visitor) that an instance keeps:
// visitors are chosen by the client (an IPv6 network holds billions of /64s), so
// without a cap they could fill the memory. When it is full a new visitor's bucket
// takes the place of the fullest of a few sampled ones (see evictLocked).
const MaxVisitorBuckets = 1 << 16

// visitorKey is a public token's visitor: its client address, an IPv6 address counted
// by its /64 as sign-in counts it (ratelimit.AddrKey): one host's privacy addresses,
// or a whole small network, are one visitor, or one host could be a new visitor with
// each request.
type visitorKey struct {
	token   string
	visitor netip.Prefix
}

// limiter holds one token bucket per token and, for public tokens, one per (token,
// visitor); idle full buckets are swept away. In a cluster of n instances each keeps
// 1/n of every rate and burst: the load balancer spreads a client's requests, so the
// cluster as a whole allows the configured limit.
//
// Not ratelimit.Keyed, the sign-in's: a request is checked against two buckets under
// one lock (the visitor's asked, the token's spent, then the visitor's), both kinds are
// re-shared when the cluster changes, and eviction must spare the emptiest buckets, a
// flooding visitor's.
type limiter struct {
	cfg         Limits
	shares      int // instances sharing the limits (1 alone)
	maxVisitors int // MaxVisitorBuckets; tests set fewer
	mu          sync.Mutex
	tokens      map[string]*rate.Limiter
	visitors    map[visitorKey]*rate.Limiter
	lastSweep   time.Time
}

func newLimiter(cfg Limits) *limiter {
	return &limiter{cfg: cfg, shares: 1, maxVisitors: MaxVisitorBuckets,
		tokens: map[string]*rate.Limiter{}, visitors: map[visitorKey]*rate.Limiter{}}
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
	set := func(b *rate.Limiter, r float64, burst int) {
		r, burst = l.share(r, burst)
		b.SetLimitAt(now, rate.Limit(r))
		b.SetBurstAt(now, burst)
	}
	for _, b := range l.tokens {
		set(b, l.cfg.TokenRate, l.cfg.TokenBurst)
	}
	for _, b := range l.visitors {
		set(b, l.cfg.PublicIPRate, l.cfg.PublicIPBurst)
	}
}

// tokenBucket is the token's bucket, made on first use.
func (l *limiter) tokenBucket(token string) *rate.Limiter {
	b := l.tokens[token]
	if b == nil {
		r, burst := l.share(l.cfg.TokenRate, l.cfg.TokenBurst)
		b = rate.NewLimiter(rate.Limit(r), burst)
		l.tokens[token] = b
	}
	return b
}

// visitorBucket is the bucket of (token, ip's visitor), made on first use; when the
// map is full, in the place of another (evictLocked).
func (l *limiter) visitorBucket(token string, ip netip.Addr, now time.Time) *rate.Limiter {
	k := visitorKey{token, ratelimit.AddrKey(ip)}
	b := l.visitors[k]
	if b == nil {
		if len(l.visitors) >= l.maxVisitors {
			l.evictLocked(now)
		}
		r, burst := l.share(l.cfg.PublicIPRate, l.cfg.PublicIPBurst)
		b = rate.NewLimiter(rate.Limit(r), burst)
		l.visitors[k] = b
	}
	return b
}

// evictSample is how many buckets evictLocked compares.
const evictSample = 16

// evictLocked drops one visitor's bucket: of a few (the map's iteration starts at a
// random place), the one with the most tokens left, which holds the least: a visitor
// at rest, or one that has barely begun. Whoever is evicted starts again with a full
// bucket, no more than a new address would get, and the token's own bucket still
// bounds the whole: so evicting can never lock a visitor out, and a full map costs
// the same few steps per new visitor however many addresses knock.
func (l *limiter) evictLocked(now time.Time) {
	var victim visitorKey
	most, seen := -1.0, 0
	for k, b := range l.visitors {
		if t := b.TokensAt(now); t > most {
			victim, most = k, t
		}
		if seen++; seen == evictSample {
			break
		}
	}
	delete(l.visitors, victim)
}

type verdict struct {
	limit, remaining int
	reset, retry     time.Duration
	ok               bool
	perVisitor       bool // the bucket of (public token, visitor)
}

// state is a bucket's verdict after the requests it was asked for.
func state(b *rate.Limiter, ok, perVisitor bool, now time.Time) verdict {
	r, burst, tokens := float64(b.Limit()), b.Burst(), b.TokensAt(now)
	v := verdict{limit: burst, remaining: max(0, int(math.Floor(tokens))), ok: ok, perVisitor: perVisitor}
	v.reset = time.Duration((float64(burst) - tokens) / r * float64(time.Second))
	if !ok {
		v.retry = time.Duration((1 - tokens) / r * float64(time.Second))
	}
	return v
}

// allow spends one request from the token's bucket and, for a public token, from the
// bucket of (token, visitor). It sets the RateLimit-* headers of the tighter one.
func (l *limiter) allow(w http.ResponseWriter, tok *tidings.Token, ip netip.Addr, now time.Time) error {
	_, err := l.allowN(w, tok, ip, now, 1)
	return err
}

// allowN spends up to n requests, one at a time, and stops at the first the buckets
// refuse: a batch's events are counted one by one. It returns how many were allowed and,
// when fewer than n, the refusal; the headers say the buckets' state after.
//
// A public token's visitor is asked first, and the token's bucket spent only for a
// request the visitor's allows: a request refused per visitor costs the token nothing,
// so one visitor spends at most its own bucket of the token's, never the share of the
// token's other visitors (a flood from one address refused 11 of 12 other visitors).
func (l *limiter) allowN(w http.ResponseWriter, tok *tidings.Token, ip netip.Addr, now time.Time, n int) (int, error) {
	l.mu.Lock()
	var tb, vb *rate.Limiter
	if l.cfg.TokenRate > 0 {
		tb = l.tokenBucket(tok.ID)
	}
	if tok.Access == tidings.AccessPublic && l.cfg.PublicIPRate > 0 {
		vb = l.visitorBucket(tok.ID, ip, now)
	}
	granted, tokenOK, visitorOK := 0, true, true
	for granted < n {
		if vb != nil && vb.TokensAt(now) < 1 {
			visitorOK = false
			break
		}
		if tb != nil && !tb.AllowN(now, 1) {
			tokenOK = false // the visitor's bucket is untouched: nothing to give back
			break
		}
		if vb != nil {
			// Cannot refuse: it held a token at this very instant, and l.mu is held.
			vb.AllowN(now, 1)
		}
		granted++
	}
	var vs []verdict
	if tb != nil {
		vs = append(vs, state(tb, tokenOK, false, now))
	}
	if vb != nil {
		vs = append(vs, state(vb, visitorOK, true, now))
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
				"this public token's per-visitor limit is reached: public tokens are limited per visitor address (%s/s, burst %d), "+
					"for browsers and apps; server code should use a full-access token instead (Settings → API, or "+
					"`tidings token create --access full`), which has no per-visitor limit. Retry after the time in the Retry-After header",
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
	for k, b := range l.tokens {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.tokens, k)
		}
	}
	for k, b := range l.visitors {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.visitors, k)
		}
	}
}

// ShareLimits tells the server that n instances (itself included) serve the same
// database: each then allows 1/n of every rate limit and burst, so that the cluster's
// total stays within the configured limits.
func (s *Server) ShareLimits(n int) {
	s.limits.setShares(n, s.now())
	s.hookLimits.setShares(n, s.now())
}
