package postgres_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// BenchmarkPriorityFeed times a feed page of 50 filtered by priority (priority:urgent,
// priority:>=high, …) over a project of TIDINGS_BENCH_EVENTS events (default 1
// million), against the unfiltered page. The events are made in SQL (one statement,
// not the batch path: this times reads), spread over 8 channels of unequal size and
// 30 days: 0.5% urgent, 2% high, 5% low, 1% min, the rest default.
//
//	go test -run '^$' -bench PriorityFeed -benchtime 20x ./postgres
func BenchmarkPriorityFeed(b *testing.B) {
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
	start := time.Now()
	for i, q := range []string{
		`INSERT INTO events (id, project_id, channel_id, event, parser, ts, created_at, priority, search)
		SELECT lpad(i::text, 12, '0'), p.id,
		  (SELECT c.id FROM channels c WHERE c.project_id = p.id AND c.name = (CASE -- i % 997: independent of the priority's i % 200
		    WHEN i % 997 < 300 THEN 'payments' WHEN i % 997 < 550 THEN 'signups' WHEN i % 997 < 700 THEN 'deploys'
		    WHEN i % 997 < 820 THEN 'errors' WHEN i % 997 < 920 THEN 'jobs' WHEN i % 997 < 970 THEN 'audit'
		    WHEN i % 997 < 995 THEN 'billing' ELSE 'support' END)),
		  (ARRAY['New Subscription', 'User Signed Up', 'Deploy Finished', 'Payment Failed', 'Password Reset'])[i % 5 + 1],
		  'text', $2::bigint - ($1::bigint - i) * 2592000000 / $1::bigint, $2::bigint,
		  CASE WHEN i % 200 = 7 THEN 5 WHEN i % 50 = 3 THEN 4 WHEN i % 20 = 1 THEN 2 WHEN i % 100 = 11 THEN 1 ELSE 3 END,
		  to_tsvector('simple', (ARRAY['New Subscription', 'User Signed Up', 'Deploy Finished', 'Payment Failed', 'Password Reset'])[i % 5 + 1])
		FROM generate_series(1, $1::bigint) AS i, projects p`,
		`INSERT INTO event_counts (channel_id, hour, n) SELECT channel_id, ts - ts % 3600000, count(*) FROM events GROUP BY 1, 2`,
		`ANALYZE events`,
	} {
		args := []any{n, time.Now().UnixMilli()}
		if i > 0 {
			args = nil
		}
		if _, err := postgres.ExecForTest(db, q, args...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d events made in %v", n, time.Since(start).Round(time.Second))
	words := []tidings.Term{{Words: []string{"payment"}}}
	for _, c := range []struct {
		name string
		q    tidings.EventQuery
	}{
		{"all", tidings.EventQuery{}},
		{"urgent", tidings.EventQuery{MinPriority: 5, MaxPriority: 5}},
		{">=high", tidings.EventQuery{MinPriority: 4, MaxPriority: 5}},
		{"<=low", tidings.EventQuery{MinPriority: 1, MaxPriority: 2}},
		{"default", tidings.EventQuery{MinPriority: 3, MaxPriority: 3}},
		{"urgent/channel", tidings.EventQuery{Channel: "payments", MinPriority: 5, MaxPriority: 5}},
		{"urgent/rare-channel", tidings.EventQuery{Channel: "billing", MinPriority: 5, MaxPriority: 5}},
		{">=high/words", tidings.EventQuery{Terms: words, MinPriority: 4, MaxPriority: 5}},
		{"urgent/since-1d", tidings.EventQuery{Since: time.Now().Add(-24 * time.Hour), MinPriority: 5, MaxPriority: 5}},
	} {
		c.q.Project, c.q.Limit = "shop", 50
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				page, err := db.ListEvents(ctx, a.ID, c.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Events) != 50 {
					b.Fatalf("%d events", len(page.Events))
				}
			}
		})
	}
}
