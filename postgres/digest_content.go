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
//   - events per channel: for each channel of the project (at most MaxChannelsPerProject),
//     one range of the hourly roll-up's key (event_counts: at most 168 rows a week) for
//     the period's whole hours, and two ranges of events_channel_ts for its partial
//     first and last hours (at most an hour of events each; none when from and to are
//     on the hour, a zone half an hour off UTC has them);
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
	channels, err := query(ctx, tx, scanDigestCount, sqlDigestChannels, pid, hf, ht, f, t)
	if err != nil {
		return nil, mapErr(err)
	}
	d.Channels = append(d.Channels, channels...)
	for _, c := range d.Channels {
		d.Events += c.Count
	}
	top, err := query(ctx, tx, scanDigestCount, sqlDigestTop, pid, f, t, digestTopScan)
	if err != nil {
		return nil, mapErr(err)
	}
	d.TopEvents = append(d.TopEvents, top...)
	insights, err := query(ctx, tx, func(r pgx.Row) (*tidings.Insight, error) { return scanInsight(r) }, sqlDigestInsights, pid, f, t)
	if err != nil {
		return nil, mapErr(err)
	}
	d.Insights = append(d.Insights, insights...)
	if err := tx.QueryRow(ctx, sqlDigestNewCount, pid, f, t).Scan(&d.NewUsers); err != nil {
		return nil, mapErr(err)
	}
	ids, err := query(ctx, tx, func(r pgx.Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, sqlDigestNewIDs, pid, f, t)
	if err != nil {
		return nil, mapErr(err)
	}
	d.NewUserIDs = append(d.NewUserIDs, ids...)
	return d, nil
}

const hourMS = int64(time.Hour / time.Millisecond)

// DigestOf's queries ($1 the project; TestDigestPlans checks their plans).
const (
	// sqlDigestChannels counts the events per channel: the roll-up's whole hours
	// [$2, $3), the events of [$4, $2) and [$3, $5), each by the channel's own range.
	sqlDigestChannels = `WITH c AS MATERIALIZED (SELECT ch.name,
			(coalesce((SELECT sum(k.n) FROM event_counts k WHERE k.channel_id = ch.id AND k.hour >= $2 AND k.hour < $3), 0)
			+ (SELECT count(*) FROM events e WHERE e.channel_id = ch.id AND e.ts >= $4 AND e.ts < $2)
			+ (SELECT count(*) FROM events e WHERE e.channel_id = ch.id AND e.ts >= $3 AND e.ts < $5))::bigint AS n
		FROM channels ch WHERE ch.project_id = $1)
		SELECT name, '', n FROM c WHERE n > 0 ORDER BY n DESC, name COLLATE "C"`
	// sqlDigestTop names the top 5 events of the newest $4 of [$2, $3).
	sqlDigestTop = `SELECT event, max(icon COLLATE "C"), count(*)
		FROM (SELECT event, icon FROM events WHERE project_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts DESC, id DESC LIMIT $4) e
		GROUP BY event ORDER BY 3 DESC, event COLLATE "C" LIMIT 5`
	// sqlDigestInsights: an insight changed in the period when it has a point in it
	// (its updated_at may be later: changed again since); the latest point in the
	// period orders them.
	sqlDigestInsights = `SELECT p.name, ` + insightColumns + ` FROM insights i JOIN projects p ON p.id = i.project_id
		CROSS JOIN LATERAL (SELECT max(x.ts) AS last FROM insight_points x WHERE x.insight_id = i.id AND x.ts >= $2 AND x.ts < $3) l
		WHERE i.project_id = $1 AND l.last IS NOT NULL ORDER BY l.last DESC, i.id DESC LIMIT 10`
	sqlDigestNewCount = `SELECT count(*) FROM people WHERE project_id = $1 AND first_seen >= $2 AND first_seen < $3`
	sqlDigestNewIDs   = `SELECT user_id FROM people WHERE project_id = $1 AND first_seen >= $2 AND first_seen < $3
		ORDER BY first_seen DESC, id DESC LIMIT 10`
)

func scanDigestCount(r pgx.Row) (tidings.DigestCount, error) {
	var c tidings.DigestCount
	var n int64
	err := r.Scan(&c.Name, &c.Icon, &n)
	c.Count = int(n)
	return c, err
}
