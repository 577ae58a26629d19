package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/clientip"
)

// authenticate finds the request's token, checks it, records its use and applies the
// rate limits. The token row is read on every request, so a revocation counts from
// the next request on every instance that shares the store: there is no cache to outlive it.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*tidings.Token, error) {
	h := r.Header.Get("Authorization")
	if strings.TrimSpace(h) == "" {
		return nil, tidings.Errorf(tidings.EMissingToken,
			"send your API token in the header Authorization: Bearer <token>")
	}
	scheme, secret, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return nil, tidings.Errorf(tidings.EInvalidToken, `the Authorization header must be "Bearer <token>"`)
	}
	id, hash, ok := tidings.ParseTokenSecret(strings.TrimSpace(secret))
	if !ok {
		return nil, invalidToken()
	}
	tok, err := s.store.FindToken(r.Context(), id)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return nil, invalidToken()
	}
	if err != nil {
		return nil, err
	}
	if !tok.HashMatches(hash) {
		return nil, invalidToken()
	}
	if tok.Revoked() {
		return nil, tidings.Errorf(tidings.EInvalidToken, "this API token has been revoked")
	}
	now := s.now()
	infoFrom(r.Context()).accountID = tok.AccountID
	s.usage.touch(tok.ID, now)
	if err := s.limits.allow(w, tok, clientip.Of(r, s.trusted), now); err != nil {
		return nil, err
	}
	return tok, nil
}

// invalidToken is the answer to a token that is not one of ours (made only then: an
// error built for every request cost two allocations).
func invalidToken() error {
	return tidings.Errorf(tidings.EInvalidToken, "this API token is not valid: check that it was copied whole")
}

// usage collects last-used times in memory and writes them in one transaction every
// few seconds, so that a busy token does not cost a write per request.
type usage struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (u *usage) touch(id string, at time.Time) {
	u.mu.Lock()
	if u.seen == nil {
		u.seen = map[string]time.Time{}
	}
	u.seen[id] = at
	u.mu.Unlock()
}

func (u *usage) take() map[string]time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.seen
	u.seen = nil
	return m
}

// giveBack returns times that could not be written, keeping any newer one seen since:
// the next flush (or the last, at shutdown) writes them.
func (u *usage) giveBack(m map[string]time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.seen == nil {
		u.seen = map[string]time.Time{}
	}
	for id, at := range m {
		if cur, ok := u.seen[id]; !ok || at.After(cur) {
			u.seen[id] = at
		}
	}
}

// FlushUsage writes the last-used times collected since the previous flush. Times it
// could not write (the store failed, or ctx ended mid-write as the server stops) are
// kept for the next flush rather than lost.
func (s *Server) FlushUsage(ctx context.Context) error {
	m := s.usage.take()
	if len(m) == 0 {
		return nil
	}
	err := s.store.TouchTokens(ctx, m)
	if err != nil {
		s.usage.giveBack(m)
	}
	return err
}
