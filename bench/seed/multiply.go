// -multiply: a large store made from a seeded one in SQL, with every derived row.

package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tidings-dev/tidings"
)

// multiplyEvents copies the store's events until there are k times as many: each copy
// takes new seqs after the last one and new ids (a UUIDv7 whose time follows the seq,
// after the originals' — a store accepts in id order, which the word search's bound by
// acceptance relies on — and new random bits; a BLOB, as || makes text),
// and keeps the original's timestamps, so every derived structure grows in step: the
// tag index gets the copies' rows, tag, hourly and per-user counts are multiplied, and
// the full-text index is emptied with every event left to the search backfill, which
// the next open of the store runs. Each copy is one transaction.
func multiplyEvents(ctx context.Context, file string, k int) error {
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var last int64
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&last); err != nil || last == 0 {
		return fmt.Errorf("no events to copy (%v)", err)
	}
	// The copies' ids: 1 ms after the last original's time, 100 seqs a millisecond.
	var base int64
	var hexTime string
	if err := db.QueryRowContext(ctx, `SELECT hex(substr(max(id), 1, 6)) FROM events`).Scan(&hexTime); err != nil {
		return err
	}
	if _, err := fmt.Sscanf(hexTime, "%x", &base); err != nil {
		return fmt.Errorf("the events' ids: %v", err)
	}
	began := time.Now()
	for i := 1; i < k; i++ {
		off := int64(i) * last
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`INSERT INTO events (seq, id, project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at)
				SELECT seq + ?1, unhex(printf('%012X', ?3 + 1 + seq / 100) || hex(substr(id, 7, 2)) || hex(randomblob(8))), project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at
				FROM events WHERE seq <= ?2 ORDER BY seq`,
			`INSERT INTO event_tags (tag_id, ts, seq, channel_id) SELECT tag_id, ts, seq + ?1, channel_id FROM event_tags WHERE seq <= ?2`,
		} {
			if _, err := tx.ExecContext(ctx, q, off, last, base+off/100); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return err
		}
		fmt.Printf("  copy %d of %d: %v\n", i, k-1, time.Since(began).Round(time.Second))
	}
	for _, q := range []string{
		fmt.Sprintf(`UPDATE tags SET count = count * %d`, k),
		fmt.Sprintf(`UPDATE event_counts SET n = n * %d`, k),
		// The hourly counts of common tags: those of the tags common now.
		`DELETE FROM tag_hours`,
		fmt.Sprintf(`UPDATE tags SET rolled = (count >= %d)`, tidings.TagRollup),
		`INSERT INTO tag_hours (tag_id, hour, n) SELECT t.tag_id, t.ts - t.ts % 3600000, count(*) FROM event_tags t
			WHERE t.tag_id IN (SELECT id FROM tags WHERE rolled) GROUP BY 1, 2`,
		fmt.Sprintf(`UPDATE people SET events = events * %d`, k),
		fmt.Sprintf(`UPDATE event_seq SET last = %d`, last*int64(k)),
		`INSERT INTO events_fts (events_fts) VALUES ('delete-all')`,
		fmt.Sprintf(`UPDATE search_backfill SET next_seq = %d`, last*int64(k)),
		// The indexer's watermark too: it covers the events above the backfill's, and
		// left at the original last seq it would index the copies a second time.
		fmt.Sprintf(`UPDATE search_indexed SET seq = %d`, last*int64(k)),
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
