package tidings

import (
	"context"
	"log/slog"
	"time"
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

// SearchLagger is a store whose full-text index trails its events (SQLite): how many
// committed events are not yet indexed, and when the oldest of them was committed, are
// metrics. Its searches wait for the index to hold what was committed before them.
type SearchLagger interface {
	SearchLag() (events int64, oldest time.Time)
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

// A store moves to another through neutral rows: one store dumps, the other loads,
// and neither knows the other's private schema.

// Dump is a consistent snapshot of a store's rows in the neutral shape: the tables and
// columns of the logical schema (PostgreSQL's tables are that shape), each value an
// int64, float64, string, []byte or nil. A table's row may carry a column "rowid", its
// order of insertion, which stands in for a serial column the dumping store lacks.
type Dump interface {
	// Rows calls fn with each row of table in insertion order; columns names the values.
	Rows(ctx context.Context, table string, fn func(columns []string, row []any) error) error
	// Close ends the snapshot.
	Close() error
}

// Dumper is a store that can be dumped while nothing else writes to it.
type Dumper interface {
	Dump(ctx context.Context) (Dump, error)
}

// Loader is a store that can take a whole dump, into an empty store only.
type Loader interface {
	// Load copies every table of d and checks that each holds as many rows as d.
	Load(ctx context.Context, d Dump) ([]TableCount, error)
}

// TableCount is how many rows a table holds on both sides after a load.
type TableCount struct {
	Table string
	Rows  int64
}
