package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidings-dev/tidings"
)

// checkTagHours checks the hourly counts of rolled tags (tag_hours.go) the way
// checkHourCounts checks event_counts: each stored count is counted again through the
// tag index (a range of its primary key), and a row of a tag that is not rolled is
// named. When every count is right and they add up to the rolled tags' counts (which
// the tag_index pass checks against their rows), no hour lacks its row; only a store
// where they do not is grouped hour by hour to name what is missing. Last, a tag whose
// count has reached rollup must be rolled.
func checkTagHours(ctx context.Context, tx *sql.Tx, rollup int64, r *tidings.CheckReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT h.tag_id, coalesce(g.key || ':' || g.value, ''), coalesce(g.rolled, 0), h.hour, h.n,
		(SELECT count(*) FROM event_tags t WHERE t.tag_id = h.tag_id AND t.ts >= h.hour AND t.ts < h.hour + 3600000)
		FROM tag_hours h LEFT JOIN tags g ON g.id = h.tag_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var counted int64 // the rolled tags' rows of the tag index in hours that have a count
	for rows.Next() {
		var tag, hour, n, actual int64
		var name string
		var rolled bool
		if err := rows.Scan(&tag, &name, &rolled, &hour, &n, &actual); err != nil {
			return err
		}
		where := fmt.Sprintf("tag %d (%s) hour %d", tag, name, hour)
		switch {
		case !rolled:
			r.Add(tidings.Inconsistency{Kind: "tag_hour.unrolled", Where: where, Expected: "no row (the tag is not rolled)", Found: fmt.Sprintf("a count of %d", n)})
		case n == 0 && actual == 0: // a deletion removes the row of an hour it empties
			counted += actual
			r.Add(tidings.Inconsistency{Kind: "tag_hour.zero", Where: where, Expected: "no row", Found: "a count of 0"})
		default:
			counted += actual
			if n != actual {
				r.Add(tidings.Inconsistency{Kind: "tag_hour", Where: where, Expected: fmt.Sprint(actual), Found: fmt.Sprint(n)})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(count), 0) FROM tags WHERE rolled`).Scan(&total); err != nil {
		return err
	}
	if total != counted {
		// Some events of rolled tags are in hours without a count: name those hours.
		err := eachRow(ctx, tx, `WITH actual AS (SELECT t.tag_id, t.ts - t.ts % 3600000 AS hour, count(*) AS n FROM event_tags t
				WHERE t.tag_id IN (SELECT id FROM tags WHERE rolled) GROUP BY 1, 2)
			SELECT 'tag ' || a.tag_id || ' (' || g.key || ':' || g.value || ') hour ' || a.hour, a.n, 'no row'
			FROM actual a JOIN tags g ON g.id = a.tag_id
			WHERE NOT EXISTS (SELECT 1 FROM tag_hours h WHERE h.tag_id = a.tag_id AND h.hour = a.hour)`,
			func(where, expected, found string) {
				r.Add(tidings.Inconsistency{Kind: "tag_hour.missing", Where: where, Expected: expected, Found: found})
			})
		if err != nil {
			return err
		}
	}
	return eachRow(ctx, tx, `SELECT 'tag ' || id || ' (' || key || ':' || value || ')', 'rolled (a count of at least ' || ?1 || ')', 'not rolled, a count of ' || count
		FROM tags WHERE count >= ?1 AND NOT rolled`, func(where, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: "tag_hour.rolled", Where: where, Expected: expected, Found: found})
	}, rollup)
}
