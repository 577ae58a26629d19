package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// CountTagHours returns the counts per value and UTC hour, for the hours that start in
// [from, to), of the project's events with tag key (and value, when not nil): a rolled
// tag's from its hourly counts (tag_hours), the others' from their event_tags rows, at
// most max rows read in all (their counts in tag_counts say how many before any is
// read), or tidings.ErrScanBudget.
func (db *DB) CountTagHours(ctx context.Context, accountID int64, project, key string, value *string, from, to time.Time, max int) ([]tidings.TagHourCount, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	// An hour is counted when it starts in [from, to): its events are those of
	// [lo, hi), the hours' starts from from and to on.
	lo, hi := ceilHour(ms(from)), ceilHour(ms(to))
	if lo >= hi {
		return nil, nil
	}
	if value != nil {
		return db.countTagValueHours(ctx, p.ID, key, *value, lo, hi, max)
	}
	// The rare values' counts first, the budget's: at most max+1 of them are summed,
	// each at least 1, so that a key of very many rare values is refused at once.
	batch := &pgx.Batch{}
	batch.Queue(`SELECT coalesce(sum(n), 0) FROM (SELECT n FROM tag_counts
		WHERE project_id = $1 AND key = $2 AND NOT rolled LIMIT $3) x`, p.ID, key, int64(max)+1)
	batch.Queue(sqlTagHoursRows+` ORDER BY value, hour`, p.ID, key, lo, hi)
	res := db.pool.SendBatch(ctx, batch)
	defer res.Close()
	var rare int64
	if err := res.QueryRow().Scan(&rare); err != nil {
		return nil, mapErr(err)
	}
	if rare > int64(max) {
		return nil, tidings.ErrScanBudget
	}
	rows, err := res.Query()
	if err != nil {
		return nil, mapErr(err)
	}
	out := []tidings.TagHourCount{}
	for rows.Next() {
		c, err := scanTagHour(rows)
		if err != nil {
			rows.Close()
			return nil, mapErr(err)
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	if err := res.Close(); err != nil {
		return nil, mapErr(err)
	}
	if rare == 0 {
		return out, nil
	}
	// Each rare value's rows in its own index range (LATERAL: never a walk over the
	// rolled values' millions of rows).
	more, err := query(ctx, db.pool, scanTagHour, `SELECT c.value, t.hour, count(*) FROM tag_counts c
		CROSS JOIN LATERAL (SELECT t.ts - t.ts % 3600000 AS hour FROM event_tags t
		  WHERE t.project_id = c.project_id AND t.key = c.key AND t.value = c.value AND t.ts >= $3 AND t.ts < $4) t
		WHERE c.project_id = $1 AND c.key = $2 AND NOT c.rolled
		GROUP BY 1, 2 ORDER BY 1, 2`, p.ID, key, lo, hi)
	if err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

// sqlTagHoursRows reads the hourly counts of a key's rolled values ($1 project, $2
// key, hours in [$3, $4)); only a rolled tag has any.
const sqlTagHoursRows = `SELECT value, hour, n FROM tag_hours WHERE project_id = $1 AND key = $2 AND hour >= $3 AND hour < $4 AND n > 0`

// countTagValueHours is CountTagHours for one value: its count and flag say where
// its hours are read.
func (db *DB) countTagValueHours(ctx context.Context, project int64, key, value string, lo, hi int64, max int) ([]tidings.TagHourCount, error) {
	var n int64
	var rolled bool
	err := db.pool.QueryRow(ctx, `SELECT n, rolled FROM tag_counts WHERE project_id = $1 AND key = $2 AND value = $3`,
		project, key, value).Scan(&n, &rolled)
	switch {
	case noRows(err):
		return nil, nil // no event has it
	case err != nil:
		return nil, mapErr(err)
	case rolled:
		return query(ctx, db.pool, scanTagHour, sqlTagHoursRows+` AND value = $5 ORDER BY hour`, project, key, lo, hi, value)
	case n > int64(max):
		return nil, tidings.ErrScanBudget
	}
	return query(ctx, db.pool, scanTagHour, `SELECT value, ts - ts % 3600000, count(*) FROM event_tags
		WHERE project_id = $1 AND key = $2 AND value = $3 AND ts >= $4 AND ts < $5 GROUP BY 1, 2 ORDER BY 2`,
		project, key, value, lo, hi)
}

func scanTagHour(r pgx.Row) (tidings.TagHourCount, error) {
	var c tidings.TagHourCount
	var hour int64
	err := r.Scan(&c.Value, &hour, &c.N)
	c.Hour = fromMS(hour)
	return c, err
}

// ceilHour is the start of the first hour that starts at t (unix ms) or later.
func ceilHour(t int64) int64 {
	if r := t % 3_600_000; r != 0 {
		if r < 0 {
			r += 3_600_000
		}
		return t - r + 3_600_000
	}
	return t
}

var _ tidings.TagHourCounter = (*DB)(nil)
