package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tidings-dev/tidings"
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
	rows, err := tx.QueryContext(ctx, `SELECT seq, project_id, channel_id, event, description, tags, user_id FROM events
		WHERE seq > ? AND seq <= ?`, lo, next)
	if err != nil {
		return 0, err
	}
	type row struct {
		seq, project, channel int64
		ev                    tidings.Event
	}
	var chunk []row
	for rows.Next() {
		var r row
		var tags string
		if err := rows.Scan(&r.seq, &r.project, &r.channel, &r.ev.Event, &r.ev.Description, &tags, &r.ev.UserID); err != nil {
			rows.Close()
			return 0, err
		}
		if err := json.Unmarshal([]byte(tags), &r.ev.Tags); err != nil {
			rows.Close()
			return 0, err
		}
		chunk = append(chunk, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	findTag, err := tx.PrepareContext(ctx, sqlFindTag)
	if err != nil {
		return 0, err
	}
	defer findTag.Close()
	tagIDs := map[tagKey]int64{}
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, insertSearch(len(args)/3), args...)
		args = args[:0]
		return err
	}
	for _, r := range chunk {
		ids := make([]int64, 0, len(r.ev.Tags))
		for _, t := range r.ev.Tags {
			k := tagKey{r.project, t.Key, t.Value}
			id, ok := tagIDs[k]
			if !ok {
				if err := findTag.QueryRowContext(ctx, r.project, t.Key, t.Value).Scan(&id); err != nil && !errors.Is(err, sql.ErrNoRows) {
					return 0, err
				}
				tagIDs[k] = id
			}
			if id != 0 {
				ids = append(ids, id)
			}
		}
		args = append(args, r.seq, r.ev.SearchText(), searchScope(r.project, r.channel, ids, r.ev.UserID))
		if len(args) == 3*searchChunk {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE search_backfill SET next_seq = ?`, lo); err != nil {
		return 0, err
	}
	return lo, tx.Commit()
}
