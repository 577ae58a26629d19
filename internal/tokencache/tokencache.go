// Package tokencache keeps API tokens read from the store for at most a second, so
// that a busy client does not cost a database read per request.
//
// A store that holds a Cache clears it in every write that can make a token invalid
// (revoking it, deleting the project or channel it is limited to): in the process
// that made the change, revocation counts from the next request. Other processes
// sharing the store (another instance, the management CLI) see it once their entry
// expires, within TTL.
package tokencache

import (
	"sync"
	"time"

	"github.com/tidings-dev/tidings"
)

// TTL is how long a token read from the store is trusted.
const TTL = time.Second

// Max bounds the number of tokens kept. Only tokens that exist are kept (a lookup
// that finds nothing is not cached), so a flood of made-up IDs cannot fill it.
const Max = 10_000

// Cache is safe for concurrent use. The zero value is not: use New.
type Cache struct {
	mu  sync.Mutex
	m   map[string]entry
	now func() time.Time
	gen uint64 // bumped by Clear: a read that began before a Clear must not store its result
}

type entry struct {
	tok     tidings.Token
	expires time.Time
}

// New returns an empty cache; now is the clock (time.Now when nil).
func New(now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{m: map[string]entry{}, now: now}
}

// Get returns a copy of the cached token, if it was read less than TTL ago, and the
// generation to pass to Put after reading it from the store.
func (c *Cache) Get(id string) (*tidings.Token, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if ok && c.now().Before(e.expires) {
		t := e.tok
		return &t, c.gen
	}
	if ok {
		delete(c.m, id)
	}
	return nil, c.gen
}

// Put keeps a copy of tok, read from the store after Get returned gen. If the cache was
// cleared meanwhile, the read may predate the change that cleared it: it is dropped.
func (c *Cache) Put(tok *tidings.Token, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	now := c.now()
	if len(c.m) >= Max {
		for id, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, id)
			}
		}
		if len(c.m) >= Max {
			clear(c.m) // all fresh: start again rather than grow
		}
	}
	c.m[tok.ID] = entry{tok: *tok, expires: now.Add(TTL)}
}

// Clear forgets every token; the store calls it in any write that may invalidate one.
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.gen++
}

// Len reports how many tokens are kept.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
