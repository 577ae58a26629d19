package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// digestTopScan bounds the events read to name a digest's top events: a period with
// more names those of its latest digestTopScan events.
const digestTopScan = 100_000

// DigestOf returns what the digest of a project's [from, to) says, by the events'
// timestamps (as charts count them). What it costs:
//   - events per channel: the hourly roll-up (event_counts, by its key: one range per
//     channel) for the period's whole hours, and an index range scan of the events of
//     its partial first and last hours (none when from and to are on the hour);
//   - top events: an index range scan of the period's events (events_project_ts), at
//     most digestTopScan of them;
//   - insights: those with a point in the period, one range of insight_points_insight_ts
//     per insight of the project (at most MaxInsightsPerProject);
//   - new people: a range of people_first_seen (project, first_seen).
//
// One repeatable-read, read-only transaction: every part of one snapshot.
func (db *DB) DigestOf(ctx context.Context, accountID int64, project string, from, to time.Time) (*tidings.DigestContent, error) {
	d := &tidings.DigestContent{Project: project, From: from, To: to, Channels: []tidings.DigestCount{},
		TopEvents: []tidings.DigestCount{}, Insights: []*tidings.Insight{}, NewUserIDs: []string{}}
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, mapErr(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var pid int64
	err = tx.QueryRow(ctx, `SELECT id FROM projects WHERE account_id = $1 AND name = $2`, accountID, project).Scan(&pid)
	if noRows(err) {
		return nil, tidings.ProjectNotFound(project)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	if !to.After(from) {
		return d, nil
	}
	f, t := ms(from), ms(to)
	// [hf, ht): the period's whole hours, from the roll-up; the rest from the events.
	hf, ht := (f+hourMS-1)/hourMS*hourMS, t/hourMS*hourMS
	if f < 0 || hf >= ht {
		hf, ht = t, t // no whole hour (or before 1970): every event read, [f, t) as the first edge
	}
	channels, err := query(ctx, tx, scanDigestCount, `WITH n AS (
			SELECT c.channel_id, sum(c.n) AS n FROM event_counts c JOIN channels ch ON ch.id = c.channel_id
			WHERE ch.project_id = $1 AND c.hour >= $2 AND c.hour < $3 GROUP BY 1
			UNION ALL
			SELECT channel_id, count(*) FROM events WHERE project_id = $1 AND ts >= $4 AND ts < $2 GROUP BY 1
			UNION ALL
			SELECT channel_id, count(*) FROM events WHERE project_id = $1 AND ts >= $3 AND ts < $5 GROUP BY 1)
		SELECT ch.name, '', sum(n.n)::bigint FROM n JOIN channels ch ON ch.id = n.channel_id
		GROUP BY ch.name HAVING sum(n.n) > 0 ORDER BY 3 DESC, ch.name COLLATE "C"`, pid, hf, ht, f, t)
	if err != nil {
		return nil, mapErr(err)
	}
	d.Channels = append(d.Channels, channels...)
	for _, c := range d.Channels {
		d.Events += c.Count
	}
	top, err := query(ctx, tx, scanDigestCount, `SELECT event, max(icon COLLATE "C"), count(*)
		FROM (SELECT event, icon FROM events WHERE project_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts DESC LIMIT $4) e
		GROUP BY event ORDER BY 3 DESC, event COLLATE "C" LIMIT 5`, pid, f, t, digestTopScan)
	if err != nil {
		return nil, mapErr(err)
	}
	d.TopEvents = append(d.TopEvents, top...)
	// An insight changed in the period when it has a point in it: its updated_at may
	// be later (changed again since), and the latest point in the period orders them.
	insights, err := query(ctx, tx, func(r pgx.Row) (*tidings.Insight, error) { return scanInsight(r) },
		`SELECT p.name, `+insightColumns+` FROM insights i JOIN projects p ON p.id = i.project_id
		CROSS JOIN LATERAL (SELECT max(x.ts) AS last FROM insight_points x WHERE x.insight_id = i.id AND x.ts >= $2 AND x.ts < $3) l
		WHERE i.project_id = $1 AND l.last IS NOT NULL ORDER BY l.last DESC, i.id DESC LIMIT 10`, pid, f, t)
	if err != nil {
		return nil, mapErr(err)
	}
	d.Insights = append(d.Insights, insights...)
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM people WHERE project_id = $1 AND first_seen >= $2 AND first_seen < $3`,
		pid, f, t).Scan(&d.NewUsers); err != nil {
		return nil, mapErr(err)
	}
	ids, err := query(ctx, tx, func(r pgx.Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT user_id FROM people WHERE project_id = $1 AND first_seen >= $2 AND first_seen < $3
		ORDER BY first_seen DESC, id DESC LIMIT 10`, pid, f, t)
	if err != nil {
		return nil, mapErr(err)
	}
	d.NewUserIDs = append(d.NewUserIDs, ids...)
	return d, nil
}

const hourMS = int64(time.Hour / time.Millisecond)

func scanDigestCount(r pgx.Row) (tidings.DigestCount, error) {
	var c tidings.DigestCount
	var n int64
	err := r.Scan(&c.Name, &c.Icon, &n)
	c.Count = int(n)
	return c, err
}
