package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jackc/pgx/v5"
)

// SetTextBudget sets how many events' search vectors db's check compares before it
// samples them (searchTextBudget).
func SetTextBudget(db *DB, n float64) { db.textBudget = n }

// SetTagRollup sets how many events a tag of db must have had for its hourly counts
// to be kept (tidings.TagRollup).
func SetTagRollup(db *DB, n int64) { db.tagRollup = n }

// QueryRowForTest runs a query on db's pool: a test's look at the tables.
func QueryRowForTest(db *DB, q string, args ...any) pgx.Row {
	return db.pool.QueryRow(context.Background(), q, args...)
}

// ExecForTest runs a statement on db's pool: a test's or benchmark's own rows.
func ExecForTest(db *DB, q string, args ...any) (pgconn.CommandTag, error) {
	return db.pool.Exec(context.Background(), q, args...)
}
