package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// DeleteEvent deletes one event; its tag rows go with it (foreign key), and it leaves
// the tag, hourly and user counts in the same transaction.
func (db *DB) DeleteEvent(ctx context.Context, accountID int64, project, id string) error {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return err
	}
	found := false
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		doomed, err := lockDoomed(ctx, tx, `SELECT id, channel_id, ts, user_id FROM events WHERE id = $1 AND project_id = $2 FOR UPDATE`, id, p.ID)
		if err != nil {
			return err
		}
		found = len(doomed) > 0
		return deleteEvents(ctx, tx, p.ID, doomed)
	})
	if err != nil {
		return err
	}
	if !found {
		return tidings.EventNotFound(project, id)
	}
	return nil
}

// doomedEvent is an event about to be deleted: what its deletion must undo.
type doomedEvent struct {
	id, user    string
	channel, ts int64
}

// lockDoomed reads (and locks) the events a deletion takes.
func lockDoomed(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]doomedEvent, error) {
	return query(ctx, tx, func(r pgx.Row) (doomedEvent, error) {
		var d doomedEvent
		return d, r.Scan(&d.id, &d.channel, &d.ts, &d.user)
	}, q, args...)
}

// deleteEvents deletes locked events of a project and takes them off the counts. Every
// writer locks count rows in one order, the batches' (hours, then users, then their
// minutes, then tags, then the tags' hours, each in key order), so that a deletion and
// a batch never wait for each other in a circle.
func deleteEvents(ctx context.Context, tx pgx.Tx, project int64, doomed []doomedEvent) error {
	if len(doomed) == 0 {
		return nil
	}
	n := len(doomed)
	ids, channels, hours, users, minutes := make([]string, n), make([]int64, n), make([]int64, n), make([]string, n), make([]int64, n)
	for i, d := range doomed {
		ids[i], channels[i], hours[i], users[i], minutes[i] = d.id, d.channel, d.ts-d.ts%3_600_000, d.user, d.ts-d.ts%60_000
	}
	steps := []struct {
		q         string
		args      []any
		tagCounts bool // the counts it takes rows off are deleted at 0, its rolled tags' hours follow (uncountTags)
		minutes   bool // q is the gone query of uncountEventMinutes
	}{
		{`WITH gone AS (SELECT c, h, count(*) AS n FROM unnest($1::bigint[], $2::bigint[]) AS x(c, h) GROUP BY 1, 2),
			locked AS (SELECT e.channel_id, e.hour, gone.n FROM event_counts e JOIN gone ON e.channel_id = gone.c AND e.hour = gone.h
			  ORDER BY 1, 2 FOR UPDATE OF e)
			UPDATE event_counts e SET n = greatest(e.n - locked.n, 0) FROM locked
			WHERE e.channel_id = locked.channel_id AND e.hour = locked.hour`, []any{channels, hours}, false, false},
		{`WITH gone AS (SELECT u, count(*) AS n FROM unnest($2::text[]) AS x(u) WHERE u <> '' GROUP BY 1),
			locked AS (SELECT p.user_id, gone.n FROM people p JOIN gone ON p.user_id = gone.u WHERE p.project_id = $1
			  ORDER BY 1 FOR UPDATE OF p)
			UPDATE people p SET events = greatest(p.events - locked.n, 0) FROM locked
			WHERE p.project_id = $1 AND p.user_id = locked.user_id`, []any{project, users}, false, false},
		{`SELECT u, m, count(*) AS n FROM unnest($2::text[], $3::bigint[]) AS x(u, m) WHERE u <> '' GROUP BY 1, 2`,
			[]any{project, users, minutes}, false, true},
		{`WITH gone AS (SELECT key, value, count(*) AS n FROM event_tags WHERE event_id = ANY($2::text[]) GROUP BY 1, 2),
			locked AS (SELECT c.key, c.value, gone.n FROM tag_counts c JOIN gone USING (key, value) WHERE c.project_id = $1
			  ORDER BY 1, 2 FOR UPDATE OF c)
			UPDATE tag_counts c SET n = greatest(c.n - locked.n, 0) FROM locked
			WHERE c.project_id = $1 AND c.key = locked.key AND c.value = locked.value
			RETURNING c.key, c.value, c.n, c.rolled`, []any{project, ids}, true, false},
		// Its pending deliveries go with it: nobody is told of an event that is gone.
		{`DELETE FROM deliveries WHERE event_id = ANY($1::text[])`, []any{ids}, false, false},
		{`DELETE FROM events WHERE id = ANY($1::text[])`, []any{ids}, false, false},
	}
	for _, s := range steps {
		var err error
		switch {
		case s.tagCounts:
			err = uncountTags(ctx, tx, project, s.q, s.args, `t.event_id = ANY($4::text[])`, ids)
		case s.minutes:
			err = uncountEventMinutes(ctx, tx, s.q, s.args...)
		default:
			_, err = tx.Exec(ctx, s.q, s.args...)
		}
		if err != nil {
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

// PurgeExpired deletes up to max expired events and page views, one project with a
// retention at a time, each in short transactions of its own.
func (db *DB) PurgeExpired(ctx context.Context, now time.Time, max int) (int, error) {
	type kept struct{ id, days int64 }
	projects, err := query(ctx, db.pool, func(r pgx.Row) (kept, error) {
		var k kept
		return k, r.Scan(&k.id, &k.days)
	}, `SELECT id, retention_days FROM projects WHERE retention_days > 0 ORDER BY id`)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, k := range projects {
		cutoff := ms(now) - k.days*24*3_600_000
		n := 0
		// SKIP LOCKED lets two instances purge side by side.
		err := db.inTx(ctx, func(tx pgx.Tx) error {
			doomed, err := lockDoomed(ctx, tx, `SELECT id, channel_id, ts, user_id FROM events WHERE project_id = $1 AND ts < $2
				ORDER BY ts, id LIMIT $3 FOR UPDATE SKIP LOCKED`, k.id, cutoff, max-deleted)
			if err != nil {
				return err
			}
			n = len(doomed)
			return deleteEvents(ctx, tx, k.id, doomed)
		})
		if err != nil {
			return deleted, err
		}
		if deleted += n; deleted >= max {
			break
		}
		err = db.inTx(ctx, func(tx pgx.Tx) error {
			n, err = purgeViews(ctx, tx, k.id, cutoff, max-deleted)
			return err
		})
		if err != nil {
			return deleted, err
		}
		if deleted += n; deleted >= max {
			break
		}
	}
	return deleted, nil
}
