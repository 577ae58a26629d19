package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// DeleteEvent deletes one event: its row (the trigger of migration 7 takes its row of
// the search index along), its rows of the tag index, and it from the tag and hourly
// counts, in one group-committed transaction.
func (db *DB) DeleteEvent(ctx context.Context, accountID int64, project, id string) error {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return err
	}
	notFound := tidings.EventNotFound(project, id)
	key, ok := idBytes(id)
	if !ok {
		return notFound
	}
	found := false
	err = db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var d doomed
		err := tx.QueryRowContext(ctx, `SELECT seq, id, ts, channel_id, tags, user_id FROM events WHERE id = ? AND project_id = ?`, key, p.ID).
			Scan(&d.seq, &d.id, &d.ts, &d.channel, &d.tags, &d.user)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return deleteEvents(ctx, tx, p.ID, []doomed{d})
	})
	if err != nil {
		return err
	}
	if !found {
		return notFound
	}
	return nil
}

// doomed is an event about to be deleted: what its deletion must undo.
type doomed struct {
	seq, ts, channel int64
	id               []byte
	tags             string // its tags as stored (JSON)
	user             string
}

// deleteEvents deletes events of one project in tx: their rows of the tag index, them
// from the tag and hourly counts (their rolled tags' too), and their rows (the trigger of migration 7 takes
// their rows of the search index along).
func deleteEvents(ctx context.Context, tx *sql.Tx, project int64, events []doomed) error {
	tagIDs := map[tagKey]tagEntry{}
	tagGone := map[int64]int64{}
	tagHourGone := map[tagHourKey]int64{}
	hourGone := map[hourKey]int64{}
	userGone := map[string]int64{}
	minuteGone := map[userMinuteKey]int64{}
	for _, d := range events {
		var tt tidings.Tags
		if err := json.Unmarshal([]byte(d.tags), &tt); err != nil {
			return err
		}
		for _, t := range tt {
			k := tagKey{project, t.Key, t.Value}
			tag, ok := tagIDs[k]
			if !ok {
				err := tx.QueryRowContext(ctx, sqlFindTagEntry, project, t.Key, t.Value).Scan(&tag.id, &tag.count, &tag.rolled)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				tagIDs[k] = tag
			}
			if tag.id == 0 {
				continue
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM event_tags WHERE tag_id = ? AND ts = ? AND seq = ?`, tag.id, d.ts, d.seq)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				tagGone[tag.id]++
				if tag.rolled {
					tagHourGone[tagHourKey{tag.id, hourOf(d.ts)}]++
				}
			}
		}
		hourGone[hourKey{d.channel, hourOf(d.ts)}]++
		if d.user != "" {
			userGone[d.user]++
			minuteGone[userMinuteKey{project, d.user, d.ts / msPerMinute}]++
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE seq = ?`, d.seq); err != nil {
			return err
		}
		// Its pending deliveries go with it: nobody is told of an event that is gone.
		if len(d.id) == 16 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE event_id = ?`, uuid.UUID(d.id).String()); err != nil {
				return err
			}
		}
	}
	for id, n := range tagGone {
		if _, err := tx.ExecContext(ctx, `UPDATE tags SET count = max(count - ?, 0) WHERE id = ?`, n, id); err != nil {
			return err
		}
	}
	if err := subtractTagHours(ctx, tx, tagHourGone); err != nil {
		return err
	}
	for u, n := range userGone {
		if _, err := tx.ExecContext(ctx, `UPDATE people SET events = max(events - ?, 0) WHERE project_id = ? AND user_id = ?`,
			n, project, u); err != nil {
			return err
		}
	}
	// A minute left without activity loses its row (a session may split there).
	sessions := sessionCounts{}
	refs := map[string]int64{}
	for k, n := range minuteGone {
		ref, ok := refs[k.id]
		if !ok {
			err := tx.QueryRowContext(ctx, `SELECT id FROM people WHERE project_id = ? AND user_id = ?`, k.project, k.id).Scan(&ref)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			refs[k.id] = ref
		}
		if ref == 0 {
			continue // no user row: the check names that (user_count)
		}
		if err := sessions.takeMinute(ctx, tx, ref, k.minute, n, 0); err != nil {
			return err
		}
	}
	if err := sessions.write(ctx, tx); err != nil {
		return err
	}
	// An hour left without events loses its row: a count of 0 would stand for events
	// that are not there (tidings check names one as hour_count.zero).
	for k, n := range hourGone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM event_counts WHERE channel_id = ? AND hour = ? AND n <= ?`,
			k.channel, k.hour, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE event_counts SET n = n - ? WHERE channel_id = ? AND hour = ?`,
			n, k.channel, k.hour); err != nil {
			return err
		}
	}
	return nil
}

// SetRetention sets how many days the project keeps its events.
func (db *DB) SetRetention(ctx context.Context, accountID int64, project string, days int) error {
	if err := tidings.CheckRetention(days); err != nil {
		return err
	}
	return db.setProject(ctx, accountID, project, "retention_days", days)
}

// PurgeExpired deletes up to max expired events and page views, the oldest of one
// project with a retention at a time (its events first), in one group-committed
// transaction: a short one, so that publishing goes on beside a purge of millions of
// events.
func (db *DB) PurgeExpired(ctx context.Context, now time.Time, max int) (int, error) {
	type kept struct{ id, days int64 }
	rows, err := db.read.QueryContext(ctx, `SELECT id, retention_days FROM projects WHERE retention_days > 0 ORDER BY id`)
	if err != nil {
		return 0, err
	}
	var projects []kept
	for rows.Next() {
		var k kept
		if err := rows.Scan(&k.id, &k.days); err != nil {
			rows.Close()
			return 0, err
		}
		projects = append(projects, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	deleted := 0
	for _, k := range projects {
		cutoff := ms(now) - k.days*24*3_600_000
		err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT seq, id, ts, channel_id, tags, user_id FROM events WHERE project_id = ? AND ts < ?
				ORDER BY ts, seq LIMIT ?`, k.id, cutoff, max-deleted)
			if err != nil {
				return err
			}
			var events []doomed
			for rows.Next() {
				var d doomed
				if err := rows.Scan(&d.seq, &d.id, &d.ts, &d.channel, &d.tags, &d.user); err != nil {
					rows.Close()
					return err
				}
				events = append(events, d)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if err := deleteEvents(ctx, tx, k.id, events); err != nil {
				return err
			}
			deleted += len(events)
			// Then its page views, in the same bounded batch.
			views, err := purgeViews(ctx, tx, k.id, cutoff, max-deleted)
			deleted += views
			return err
		})
		if err != nil || deleted >= max {
			return deleted, err
		}
	}
	return deleted, nil
}
