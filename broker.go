package tidings

// Notice announces a committed change to whoever watches an account: the live feed,
// the insight board, push delivery. Exactly one of Event, Insight and SessionEnd is set.
type Notice struct {
	AccountID  int64
	Event      *Event
	Insight    *Insight
	SessionEnd *SessionEnd
}

// SessionEnd announces that sessions of the account ended, so that their live views
// close at once: one session (Hash set), or every session of a user (UserID set) but
// Keep (the session that changed its own password).
type SessionEnd struct {
	Hash   []byte
	UserID int64
	Keep   []byte
}

// Ends reports whether the session hash of that user is one of the ended.
func (e *SessionEnd) Ends(userID int64, hash []byte) bool {
	if e.Hash != nil {
		return string(e.Hash) == string(hash)
	}
	return e.UserID == userID && string(e.Keep) != string(hash)
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
