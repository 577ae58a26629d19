// Package inmem holds the in-memory implementations of domain interfaces for one process.
package inmem

import (
	"sync"

	"github.com/tidings-dev/tidings"
)

// DefaultBuffer is how many notices a subscriber may have unread before it is dropped.
const DefaultBuffer = 256

// Broker is a tidings.Broker inside one process.
type Broker struct {
	mu     sync.Mutex
	subs   map[int64]map[*subscription]struct{}
	buffer int
}

var _ tidings.Broker = (*Broker)(nil)

// NewBroker returns a broker whose subscribers may fall buffer notices behind.
func NewBroker(buffer int) *Broker {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Broker{subs: map[int64]map[*subscription]struct{}{}, buffer: buffer}
}

// Publish hands n to every subscriber of its account without blocking; a subscriber
// whose buffer is full is dropped (its channel closed).
func (b *Broker) Publish(n tidings.Notice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[n.AccountID] {
		select {
		case s.ch <- n:
		default:
			b.removeLocked(s)
		}
	}
}

// Subscribe watches one account.
func (b *Broker) Subscribe(accountID int64) tidings.Subscription {
	s := &subscription{b: b, account: accountID, ch: make(chan tidings.Notice, b.buffer)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[accountID] == nil {
		b.subs[accountID] = map[*subscription]struct{}{}
	}
	b.subs[accountID][s] = struct{}{}
	return s
}

func (b *Broker) removeLocked(s *subscription) {
	set := b.subs[s.account]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(b.subs, s.account)
	}
	close(s.ch)
}

type subscription struct {
	b       *Broker
	account int64
	ch      chan tidings.Notice
}

func (s *subscription) C() <-chan tidings.Notice { return s.ch }

func (s *subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.removeLocked(s)
}
