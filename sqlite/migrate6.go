package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/pressly/goose/v3"
)

// Migration 6 rewrites the events into the lean schema (docs/performance.md):
//
//   - events get an integer key (seq, the order of acceptance) and keep their UUIDv7 as
//     16 bytes, so the feed indexes hold integers, not 36-character strings;
//   - a tag is a row of a per-project dictionary (tags), and event_tags holds one small
//     row per tag of an event, keyed (tag, ts, seq): a tag filter reads a feed page
//     straight from it, newest first, however rare or common the tag;
//   - event_counts keeps events per channel and hour, so charts and settings pages
//     count without scanning; tags.count says how common a tag is.
//
// It touches every event, so on a large store it takes a while. Goose runs a migration
// in one transaction on the store's one writing connection; before it does, copyEvents
// moves the events in chunks, each its own transaction, logging its progress, and
// resuming where it stopped if the process was killed meanwhile. The migration itself
// then moves what is left (nothing, unless events arrived) and swaps the tables.
func migration6() *goose.Migration {
	return goose.NewGoMigration(6, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, leanSchema); err != nil {
			return fmt.Errorf("lean schema: %w", err)
		}
		for {
			n, err := copyChunk(ctx, tx)
			if err != nil || n == 0 {
				if err != nil {
					return fmt.Errorf("migration 6: %w", err)
				}
				break
			}
		}
		if _, err := tx.ExecContext(ctx, finishLean); err != nil {
			return fmt.Errorf("migration 6: %w", err)
		}
		return nil
	}}, nil)
}

// leanSchema is the new tables; the feed indexes are made after the copy.
const leanSchema = `
CREATE TABLE IF NOT EXISTS events_v6 (
    seq         INTEGER PRIMARY KEY,  -- order of acceptance
    id          BLOB    NOT NULL,     -- the UUIDv7, 16 bytes
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    event       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    icon        TEXT    NOT NULL DEFAULT '',
    notify      INTEGER NOT NULL DEFAULT 0,
    tags        TEXT    NOT NULL DEFAULT '{}', -- JSON object in the order sent
    parser      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    ts          INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events_v6 (id);

CREATE TABLE IF NOT EXISTS tags (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    count      INTEGER NOT NULL DEFAULT 0, -- events with this tag
    UNIQUE (project_id, key, value)
);

CREATE TABLE IF NOT EXISTS event_tags_v6 (
    tag_id     INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    ts         INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    channel_id INTEGER NOT NULL,
    PRIMARY KEY (tag_id, ts, seq)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS event_counts (
    channel_id INTEGER NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    hour       INTEGER NOT NULL, -- unix ms of the hour's start (UTC), by the event's timestamp
    n          INTEGER NOT NULL,
    PRIMARY KEY (channel_id, hour)
) WITHOUT ROWID;`

const finishLean = `
UPDATE tags SET count = (SELECT count(*) FROM event_tags_v6 WHERE tag_id = tags.id);
DELETE FROM event_counts;
INSERT INTO event_counts (channel_id, hour, n)
  SELECT channel_id, (ts / 3600000) * 3600000, count(*) FROM events_v6 GROUP BY 1, 2;
DROP TABLE event_tags;
DROP TABLE events;
ALTER TABLE events_v6 RENAME TO events;
ALTER TABLE event_tags_v6 RENAME TO event_tags;
CREATE INDEX events_project_ts ON events (project_id, ts, seq);
CREATE INDEX events_channel_ts ON events (channel_id, ts, seq);`

// migrationChunk is how many events one transaction of the copy moves (a variable so
// that tests can cross chunks with few events).
var migrationChunk = 50_000

// copyEvents does migration 6's long part ahead of it, when the store holds events in
// the old schema.
func copyEvents(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	var old int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'events'
		AND NOT EXISTS (SELECT 1 FROM pragma_table_info('events') WHERE name = 'seq')`).Scan(&old); err != nil || old == 0 {
		return err
	}
	if _, err := db.ExecContext(ctx, leanSchema); err != nil {
		return fmt.Errorf("lean schema: %w", err)
	}
	var total, done int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&total); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM events_v6`).Scan(&done); err != nil {
		return err
	}
	if total == 0 {
		return nil
	}
	log.Info("store: migration 6 rewrites every event into a smaller, faster schema; the server starts when it is done",
		"events", total, "already_done", done)
	start, last := time.Now(), time.Now()
	for {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		n, err := copyChunk(ctx, tx)
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
		if err != nil {
			return fmt.Errorf("migration 6: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
		if time.Since(last) >= 2*time.Second {
			last = time.Now()
			log.Info("store: migration 6 in progress", "events_done", done, "of", total,
				"percent", fmt.Sprintf("%.0f", 100*float64(done)/float64(max(total, 1))))
		}
	}
	log.Info("store: migration 6 copied the events; swapping tables", "events", done, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// copyChunk moves the next events (by ID, which is their order of acceptance) with
// their tags in one transaction, and reports how many it moved.
func copyChunk(ctx context.Context, tx *sql.Tx) (int64, error) {
	var lastID []byte
	if err := tx.QueryRowContext(ctx, `SELECT id FROM events_v6 ORDER BY seq DESC LIMIT 1`).Scan(&lastID); err != nil && err != sql.ErrNoRows {
		return 0, err
	}
	after := ""
	if len(lastID) == 16 {
		after = uuid.UUID(lastID).String()
	}
	var hi sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM (SELECT id FROM events WHERE id > ? ORDER BY id LIMIT ?)`,
		after, migrationChunk).Scan(&hi); err != nil {
		return 0, err
	}
	if !hi.Valid {
		return 0, nil
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO events_v6 (id, project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at)
		SELECT unhex(replace(id, '-', '')), project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at
		FROM events WHERE id > ?1 AND id <= ?2 ORDER BY id`, after, hi.String)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO tags (project_id, key, value)
		SELECT DISTINCT e.project_id, t.key, t.value FROM events e JOIN event_tags t ON t.event_id = e.id
		WHERE e.id > ?1 AND e.id <= ?2`, after, hi.String); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO event_tags_v6 (tag_id, ts, seq, channel_id)
		SELECT g.id, n.ts, n.seq, n.channel_id
		FROM events e JOIN event_tags t ON t.event_id = e.id
		JOIN tags g ON g.project_id = e.project_id AND g.key = t.key AND g.value = t.value
		JOIN events_v6 n ON n.id = unhex(replace(e.id, '-', ''))
		WHERE e.id > ?1 AND e.id <= ?2`, after, hi.String); err != nil {
		return 0, err
	}
	return n, nil
}
