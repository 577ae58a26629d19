package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"
)

// backfillChunk is how many events of a store older than search one transaction
// indexes (a var so that tests can cross chunks with few events).
var backfillChunk int64 = 20_000

// backfillSearch indexes the events stored before migration 7 made the full-text
// index, newest first, a chunk per transaction, logging its progress every 2 s. A
// killed backfill resumes where it stopped: search_backfill holds the highest seq not
// yet indexed, updated in each chunk's transaction.
func backfillSearch(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	var total int64
	if err := db.QueryRowContext(ctx, `SELECT next_seq FROM search_backfill`).Scan(&total); err != nil || total == 0 {
		return nil // nothing to index (or no table: a store older than migration 7 is migrated first)
	}
	start, logged := time.Now(), time.Now()
	log.Info("store: indexing the stored events for search, newest first; the server starts when it is done", "up_to_seq", total)
	for {
		left, err := backfillOne(ctx, db)
		if err != nil {
			return fmt.Errorf("index events for search: %w", err)
		}
		if left == 0 {
			break
		}
		if time.Since(logged) >= 2*time.Second {
			logged = time.Now()
			log.Info("store: indexing for search in progress", "percent", 100*(total-left)/total, "seq_left", left)
		}
	}
	log.Info("store: indexed the stored events for search", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// backfillOne indexes one chunk and returns the highest seq still to index (0: done).
func backfillOne(ctx context.Context, db *sql.DB) (int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT next_seq FROM search_backfill`).Scan(&next); err != nil || next == 0 {
		return 0, err
	}
	lo := max(next-backfillChunk, 0)
	rows, err := searchRowsOf(ctx, tx, `SELECT seq, project_id, channel_id, event, description, tags, user_id, created_at
		FROM events WHERE seq > ? AND seq <= ?`, lo, next)
	if err != nil {
		return 0, err
	}
	if err := writeSearchRows(rows, func(n int, args []any) error {
		_, err := tx.ExecContext(ctx, insertSearch(n), args...)
		return err
	}); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE search_backfill SET next_seq = ?`, lo); err != nil {
		return 0, err
	}
	return lo, tx.Commit()
}
