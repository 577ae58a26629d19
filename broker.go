package tidings

// Notice announces a committed change to whoever watches an account: the live feed,
// the insight board, push delivery. Exactly one of Event and Insight is set.
type Notice struct {
	AccountID int64
	Event     *Event
	Insight   *Insight
}

// Broker fans notices out to subscribers. In one process it is in memory; a cluster
// uses one that crosses processes. Publish never blocks: a subscriber that does not keep
// up loses its subscription (its channel is closed) and must resubscribe and catch up
// from the store.
type Broker interface {
	Publish(n Notice)
	// Subscribe watches one account's notices until the subscription is closed.
	Subscribe(accountID int64) Subscription
}

// Subscription is one subscriber's stream of notices.
type Subscription interface {
	// C delivers notices; it is closed when the subscription ends or falls behind.
	C() <-chan Notice
	Close()
}
