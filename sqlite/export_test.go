package sqlite

import "context"

// WaitIndexed lets the package's external tests and benchmarks wait for the full-text
// indexer to catch up.
func WaitIndexed(ctx context.Context, db *DB) { db.waitIndexed(ctx) }

// TableBytes is the bytes of each table's and index's pages (dbstat), by name.
func TableBytes(ctx context.Context, db *DB) (map[string]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		out[name] = n
	}
	return out, rows.Err()
}
