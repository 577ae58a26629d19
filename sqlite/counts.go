package sqlite

import (
	"context"
	"time"
)

// CountEventsAfter counts events accepted after the event with ID after, up to max.
func (db *DB) CountEventsAfter(ctx context.Context, accountID int64, project, after string, max int) (int, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return 0, err
	}
	key, ok := idBytes(after)
	if !ok {
		return 0, nil
	}
	q := afterQuery("1", key, p.ID, max)
	var n int
	err = db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+q.sql+`)`, q.args...).Scan(&n)
	return n, err
}

// countChannel is how many events the channel holds, from the hourly counts.
func (db *DB) countChannel(ctx context.Context, channel int64) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM event_counts WHERE channel_id = ?`, channel).Scan(&n)
	return n, err
}

const hourMS = 3_600_000

// countsQuery counts events per bucket from the hourly counts of the project's channels
// (or one channel): no event is read.
func countsQuery(project, channel, since, width int64) eventQuery {
	if channel != 0 {
		return eventQuery{`SELECT (hour / ?) * ?, sum(n) FROM event_counts WHERE channel_id = ? AND hour >= ? GROUP BY 1`,
			[]any{width, width, channel, since}}
	}
	return eventQuery{`SELECT (hour / ?) * ?, sum(n) FROM event_counts
		WHERE channel_id IN (SELECT id FROM channels WHERE project_id = ?) AND hour >= ? GROUP BY 1`,
		[]any{width, width, project, since}}
}

// CountEventsBy counts events per bucket from since on. Buckets of whole hours from
// the start of an hour come from the hourly counts; anything finer reads the events.
func (db *DB) CountEventsBy(ctx context.Context, accountID int64, project, channel string, since time.Time, bucket time.Duration) (map[time.Time]int, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	var cid int64
	if channel != "" {
		if cid, err = db.channelID(ctx, p, channel); err != nil {
			return nil, err
		}
	}
	width, from := bucket.Milliseconds(), ms(since)
	var q eventQuery
	if width > 0 && width%hourMS == 0 && from%hourMS == 0 {
		q = countsQuery(p.ID, cid, from, width)
	} else if cid != 0 {
		q = eventQuery{`SELECT (ts / ?) * ?, count(*) FROM events WHERE channel_id = ? AND ts >= ? GROUP BY 1`,
			[]any{width, width, cid, from}}
	} else {
		q = eventQuery{`SELECT (ts / ?) * ?, count(*) FROM events WHERE project_id = ? AND ts >= ? GROUP BY 1`,
			[]any{width, width, p.ID, from}}
	}
	rows, err := db.read.QueryContext(ctx, q.sql, q.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[time.Time]int{}
	for rows.Next() {
		var start int64
		var n int
		if err := rows.Scan(&start, &n); err != nil {
			return nil, err
		}
		out[fromMS(start)] = n
	}
	return out, rows.Err()
}
