package sqlite

import "context"

// WaitIndexed lets the package's external tests and benchmarks wait for the full-text
// indexer to catch up.
func WaitIndexed(ctx context.Context, db *DB) { db.waitIndexed(ctx) }
