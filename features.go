package tidings

import (
	"context"
	"log/slog"
)

// Optional features of a store. Every Store is enough to serve; a store that also has
// one of these lets the server do more with it. The server asks for them by these
// names, never by a store's concrete type.

// Cluster is a store that several instances share: each relays the others' committed
// events and insights to its own broker, and counts the live instances so that they
// share the API's rate limits.
type Cluster interface {
	// Relay publishes to local what other instances commit, until ctx ends.
	Relay(ctx context.Context, local Broker, log *slog.Logger)
	// Heartbeat records that this instance is alive and returns how many are.
	Heartbeat(ctx context.Context) (int, error)
}

// QueueWatcher is a store whose writes wait in a queue: its length is a metric.
type QueueWatcher interface {
	QueueLen() int
}

// OutboxSignaller is a store that announces new outbox jobs, so that the delivery
// runner need not wait for its next poll.
type OutboxSignaller interface {
	OutboxSignal() <-chan struct{}
}

// LeaseReleaser is a store served by one process at a time: the delivery leases it
// holds at start are a dead process's, and are released at once.
type LeaseReleaser interface {
	ReleaseLeases(ctx context.Context) error
}

// BackerUp is a store that copies itself, consistent, to a file while it serves.
type BackerUp interface {
	Backup(ctx context.Context, path string) error
}
