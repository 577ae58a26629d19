package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// A user's sessions (people.sessions) are kept as its minutes change: a minute starts a
// session when none of the SessionGapMinutes before it has activity, so a change of
// minute m can change only whether the minutes of [m, m + gap] start one, and each of
// those is decided by the minutes of [m - gap, m + gap]. A change counts the starts
// among those minutes before and after, and moves the count by the difference.
//
// Every writer of a user's minutes holds the lock of its people row first (a batch's
// upsert, a deletion's or the purge's update), so nothing else changes them between
// the two counts.

// sqlSessionStarts counts, per user, the minutes that start a session within the
// ranges of the changed minutes ($1 users' row ids, $2 minutes).
const sqlSessionStarts = `SELECT s.p, count(DISTINCT s.x) AS n FROM (SELECT DISTINCT p, m FROM unnest($1::bigint[], $2::bigint[]) AS c(p, m)) c
	CROSS JOIN LATERAL (SELECT c.p, w.minute AS x FROM (SELECT minute, minute - lag(minute) OVER (ORDER BY minute) AS gap
	    FROM user_minutes WHERE person_ref = c.p AND minute >= c.m - ` + sessionGap + ` AND minute <= c.m + ` + sessionGap + `) w
	  WHERE w.minute >= c.m AND (w.gap IS NULL OR w.gap > ` + sessionGap + `)) s
	GROUP BY 1`

const sessionGap = "1800000" // tidings.SessionGapMinutes in ms, as SQL

// Neither is a constant below 0 (the build fails) unless sessionGap is SessionGapMinutes.
const (
	_ = uint(tidings.SessionGapMinutes*60_000 - 1800000)
	_ = uint(1800000 - tidings.SessionGapMinutes*60_000)
)

// withSessions runs change, which changes the given minutes (users' row ids and
// minutes, one pair per change), and moves the users' sessions by what it did.
func withSessions(ctx context.Context, tx pgx.Tx, refs, minutes []int64, change func() error) error {
	if len(refs) == 0 {
		return change()
	}
	rows, err := tx.Query(ctx, sqlSessionStarts, refs, minutes)
	if err != nil {
		return err
	}
	var before, starts []int64
	for rows.Next() {
		var p, n int64
		if err := rows.Scan(&p, &n); err != nil {
			rows.Close()
			return err
		}
		before, starts = append(before, p), append(starts, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := change(); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `WITH a AS (`+sqlSessionStarts+`),
		b AS (SELECT * FROM unnest($3::bigint[], $4::bigint[]) AS b(p, n)),
		d AS (SELECT coalesce(a.p, b.p) AS p, coalesce(a.n, 0) - coalesce(b.n, 0) AS delta FROM a FULL JOIN b ON b.p = a.p)
		UPDATE people SET sessions = people.sessions + d.delta FROM d WHERE people.id = d.p AND d.delta <> 0`,
		refs, minutes, before, starts)
	return err
}
