package charts

import (
	"context"
	"sync"

	"github.com/tidings-dev/tidings"
)

// Gate bounds how many questions (charts, funnels) run at once: per account, so that
// one team's slow questions never take every reader from another team's feed, and in
// all, so that questions never take every connection of the store's read pool. Its map
// holds only the accounts with a question under way or waiting for a slot (bounded by
// the requests the server takes at once): an account is forgotten when its last leaves.
type Gate struct {
	perAccount int
	slots      chan struct{}
	mu         sync.Mutex
	running    map[int64]int
}

// NewGate returns a gate for perAccount questions of one account and total of all.
func NewGate(perAccount, total int) *Gate {
	return &Gate{perAccount: max(1, perAccount), slots: make(chan struct{}, max(1, total)), running: map[int64]int{}}
}

// DefaultGate is the gate of a server not given one: one question per account, two
// in all (a question is CPU-bound; the feed keeps the rest of the readers).
func DefaultGate() *Gate { return NewGate(1, 2) }

// Enter waits for a slot and returns the function that frees it. An account that has
// perAccount questions under way is refused at once (ERateLimited), and a wait for a
// slot ends with ctx.
func (g *Gate) Enter(ctx context.Context, accountID int64) (func(), error) {
	g.mu.Lock()
	if g.running[accountID] >= g.perAccount {
		g.mu.Unlock()
		return nil, tidings.Errorf(tidings.ERateLimited,
			"this account has %d chart or funnel questions under way, the most it may at once: ask again when one is answered", g.perAccount)
	}
	g.running[accountID]++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		if g.running[accountID]--; g.running[accountID] <= 0 {
			delete(g.running, accountID)
		}
		g.mu.Unlock()
	}
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// Accounts is how many accounts have a question under way (for tests of its bound).
func (g *Gate) Accounts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.running)
}
