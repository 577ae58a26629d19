package postgres_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/postgres"
)

// BenchmarkDigestOf times the digest of a project over a day and a week, periods that
// end half an hour off the hour (08:00 in India), as most do. The project has
// TIDINGS_BENCH_EVENTS events (default 1 million) over the last 7 days in 8 channels,
// with 40 names and the hourly counts, 2,000 people and 50 insights of 20 points each,
// made in SQL (this times reads):
//
//	go test -run '^$' -bench DigestOf -benchtime 10x ./postgres
func BenchmarkDigestOf(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if s := os.Getenv("TIDINGS_BENCH_EVENTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	db := openBench(b)
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.CreateProject(ctx, a.ID, "shop"); err != nil {
		b.Fatal(err)
	}
	for _, c := range []string{"payments", "signups", "deploys", "errors", "jobs", "audit", "billing", "support"} {
		if _, err := db.CreateChannel(ctx, a.ID, "shop", c); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now().UTC()
	const week = int64(7 * 24 * time.Hour / time.Millisecond)
	start := time.Now()
	ts := now.UnixMilli()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO events (id, project_id, channel_id, event, parser, ts, created_at)
		SELECT lpad(i::text, 12, '0'), p.id,
		  (SELECT c.id FROM channels c WHERE c.project_id = p.id ORDER BY c.id OFFSET i % 8 LIMIT 1),
		  'event ' || (i * 7 % 40), 'text', $2::bigint - ($1::bigint - i) * $3::bigint / $1::bigint, $2::bigint
		FROM generate_series(1, $1::bigint) AS i, projects p`, []any{n, ts, week}},
		{`INSERT INTO event_counts (channel_id, hour, n) SELECT channel_id, ts - ts % 3600000, count(*) FROM events GROUP BY 1, 2`, nil},
		{`INSERT INTO people (project_id, user_id, first_seen, last_seen)
		SELECT p.id, 'user-' || i, $1::bigint - i * $2::bigint / 2000, $1::bigint FROM generate_series(1, 2000) AS i, projects p`, []any{ts, week}},
		{`INSERT INTO insights (project_id, title, value, change, updated_at)
		SELECT p.id, 'insight ' || i, '1', 'update', $1::bigint - i * 3600000 FROM generate_series(1, 50) AS i, projects p`, []any{ts}},
		{`INSERT INTO insight_points (insight_id, ts, value)
		SELECT i.id, $1::bigint - k * $2::bigint / 20, '1' FROM insights i, generate_series(0, 19) AS k`, []any{ts, week}},
		{`ANALYZE`, nil},
	} {
		if _, err := postgres.ExecForTest(db, q.sql, q.args...); err != nil {
			b.Fatalf("%s: %v", q.sql, err)
		}
	}
	b.Logf("%d events made in %v", n, time.Since(start).Round(time.Second))
	to := now.Truncate(time.Hour).Add(-30 * time.Minute)
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"day", 24 * time.Hour}, {"week", 7 * 24 * time.Hour}} {
		b.Run(p.name, func(b *testing.B) {
			var events int
			for b.Loop() {
				c, err := db.DigestOf(ctx, a.ID, "shop", to.Add(-p.d), to)
				if err != nil || c.Events == 0 || len(c.TopEvents) != 5 || len(c.Insights) == 0 || c.NewUsers == 0 {
					b.Fatal(err, c)
				}
				events = c.Events
			}
			b.ReportMetric(float64(events), "events")
		})
	}
}
