package postgres_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
)

// BenchmarkPageReads times what a profile and the Pages view read, on a project of
// TIDINGS_BENCH_PAGE_VIEWS page views (default 1,000,000; the target is
// 10,000,000) over a year, of 50,000 users, 5,000 paths and 200 referring hosts, one
// user of 100,000 views. The rows are made in SQL (page_views and every count, as the
// check counts them), not through AddPageViews: minutes instead of hours. With
// TIDINGS_BENCH_CHECK set, the check runs on the seed first.
//
//	go test -run '^$' -bench PageReads -benchtime 20x -timeout 60m ./postgres
func BenchmarkPageReads(b *testing.B) {
	ctx := context.Background()
	total := 1_000_000
	if v := os.Getenv("TIDINGS_BENCH_PAGE_VIEWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		total = n
	}
	// The seed is made once, here; the reads run in a sub-benchmark, which the testing
	// package calls again for each b.N.
	url := pgtest.URL(b)
	if err := seedPageReads(ctx, url, total); err != nil {
		b.Fatal(err)
	}
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a, err := db.FindAccount(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	end := time.Now().UTC().Truncate(24 * time.Hour)
	reads := []struct {
		name string
		fn   func() error
	}{
		{"profile: FindPerson", func() error { _, err := db.FindPerson(ctx, a.ID, "shop", "heavy"); return err }},
		{"profile: UserActivity 90 days", func() error {
			_, err := db.UserActivity(ctx, a.ID, "shop", "heavy", end.AddDate(0, 0, -tidings.ActivityDays))
			return err
		}},
		{"profile: journey, 1000 views", func() error {
			_, err := db.ListPageViews(ctx, a.ID, tidings.PageViewQuery{Project: "shop", UserID: "heavy", Limit: tidings.MaxPageViewsRead})
			return err
		}},
		{"project: 50 newest views", func() error {
			_, err := db.ListPageViews(ctx, a.ID, tidings.PageViewQuery{Project: "shop", Limit: tidings.DefaultPageViews})
			return err
		}},
		{"Pages view: 7 days", func() error {
			_, err := db.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "shop", From: end.AddDate(0, 0, -7), To: end})
			return err
		}},
		{"Pages view: 30 days", func() error {
			_, err := db.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "shop", From: end.AddDate(0, 0, -30), To: end})
			return err
		}},
		{"Pages view: 366 days", func() error {
			_, err := db.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "shop", From: end.AddDate(0, 0, -366), To: end})
			return err
		}},
	}
	b.Run("reads", func(b *testing.B) {
		for _, r := range reads {
			var worst, sum time.Duration
			for range b.N {
				t0 := time.Now()
				if err := r.fn(); err != nil {
					b.Fatalf("%s: %v", r.name, err)
				}
				d := time.Since(t0)
				sum += d
				worst = max(worst, d)
			}
			if os.Getenv("TIDINGS_BENCH_EXPLAIN") != "" {
				explain(b, url)
			}
			b.Logf("%-32s mean %6.1f ms, worst %6.1f ms", r.name, float64(sum.Microseconds())/float64(b.N)/1000, float64(worst.Microseconds())/1000)
		}
	})
}

// seedPageReads makes account acme's project shop of total page views over the year
// before today, and checks it when TIDINGS_BENCH_CHECK is set.
func seedPageReads(ctx context.Context, url string, total int) error {
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		return err
	}
	p, err := db.CreateProject(ctx, a.ID, "shop")
	if err != nil {
		return err
	}
	end := time.Now().UTC().Truncate(24 * time.Hour)
	if err := seedPageViews(ctx, url, p.ID, total, end.AddDate(-1, 0, 0), end); err != nil {
		return err
	}
	if os.Getenv("TIDINGS_BENCH_CHECK") == "" {
		return nil
	}
	r, err := db.Check(ctx)
	if err != nil {
		return err
	}
	if !r.OK() {
		return fmt.Errorf("the seed is not consistent: %v", r.Problems[:min(5, len(r.Problems))])
	}
	return nil
}

// seedPageViews fills a project with total page views in [start, end) and their counts.
func seedPageViews(ctx context.Context, url string, project int64, total int, start, end time.Time) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var ids []int64
	var hashes [][]byte
	var texts []string
	id := int64(0)
	add := func(s string) {
		id++
		h := sha256.Sum256([]byte(s))
		ids, hashes, texts = append(ids, id), append(hashes, h[:16]), append(texts, s)
	}
	// ids 1-5000 paths, 5001-5200 referrers, 5201-5400 their hosts, 5401 a title.
	for i := range 5000 {
		add(fmt.Sprintf("/docs/section-%d/page-%d", i%40, i))
	}
	for i := range 200 {
		add(fmt.Sprintf("https://www.host-%d.example/", i))
	}
	for i := range 200 {
		add(fmt.Sprintf("host-%d.example", i))
	}
	add("Docs")
	span := end.Sub(start).Milliseconds()
	heavy := min(100_000, total/2)
	steps := []string{
		`INSERT INTO page_texts (id, project_id, hash, text) SELECT i, $1, h, t FROM unnest($2::int[], $3::bytea[], $4::text[]) AS x(i, h, t)`,
		`SELECT setval(pg_get_serial_sequence('page_texts', 'id'), 6000)`,
		`INSERT INTO people (project_id, user_id, properties, first_seen, last_seen)
		  SELECT $1, CASE WHEN i = 1 THEN 'heavy' ELSE 'user-' || i END, '{}', 0, 0 FROM generate_series(1, 50000) i`,
		// The heavy user's views, a few a day in sessions; the others', paths skewed to the first.
		`INSERT INTO page_views (project_id, person_ref, ts, path, title, referrer, entry)
		  SELECT $1, (SELECT id FROM people WHERE project_id = $1 AND user_id = 'heavy'),
		    $2::bigint + (i::bigint * $3::bigint / $4::bigint) + (i % 7) * 11000,
		    1 + (i * 7919) % 300, 5401, CASE WHEN i % 25 = 0 THEN 5001 + i % 200 ELSE 0 END, i % 25 = 0
		  FROM generate_series(0, $4 - 1) i`,
		`INSERT INTO page_views (project_id, person_ref, ts, path, title, referrer, entry)
		  SELECT $1, (SELECT min(id) FROM people WHERE project_id = $1) + 1 + (i::bigint * 104729) % 49999,
		    $2::bigint + (abs(hashint8(i)::bigint) % 1000000) * $3::bigint / 1000000,
		    1 + floor(power(random(), 3) * 5000)::int, 5401,
		    CASE WHEN i % 10 = 0 THEN 5001 + i % 200 ELSE 0 END, i % 10 = 0
		  FROM generate_series(1, $4) i`,
		`UPDATE people p SET page_views = v.n, first_seen = v.f, last_seen = v.l
		  FROM (SELECT person_ref, count(*) AS n, min(ts) AS f, max(ts) AS l FROM page_views GROUP BY 1) v WHERE v.person_ref = p.id`,
		`INSERT INTO user_minutes (person_ref, minute, events, views) SELECT person_ref, ts - ts % 60000, 0, count(*) FROM page_views GROUP BY 1, 2`,
		`UPDATE people p SET sessions = s.n FROM (SELECT person_ref, count(*) AS n FROM (SELECT person_ref,
		    minute - lag(minute) OVER (PARTITION BY person_ref ORDER BY minute) AS gap FROM user_minutes) m
		  WHERE gap IS NULL OR gap > 1800000 GROUP BY 1) s WHERE s.person_ref = p.id`,
		`INSERT INTO page_person_paths (person_ref, path, views) SELECT person_ref, path, count(*) FROM page_views GROUP BY 1, 2`,
		`INSERT INTO page_user_days (project_id, day, person_ref, views) SELECT project_id, ts - ts % 86400000, person_ref, count(*) FROM page_views GROUP BY 1, 2, 3`,
		`INSERT INTO page_days (project_id, day, views, entries, users) SELECT project_id, ts - ts % 86400000, count(*),
		  count(*) FILTER (WHERE entry), count(DISTINCT person_ref) FROM page_views GROUP BY 1, 2`,
		`INSERT INTO page_path_days (project_id, day, path, views, entries) SELECT project_id, ts - ts % 86400000, path, count(*),
		  count(*) FILTER (WHERE entry) FROM page_views GROUP BY 1, 2, 3`,
		`INSERT INTO page_path_months (project_id, month, path, views, entries)
		  SELECT project_id, (extract(epoch FROM date_trunc('month', to_timestamp(ts / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint, path,
		    count(*), count(*) FILTER (WHERE entry) FROM page_views GROUP BY 1, 2, 3`,
		`INSERT INTO page_referrer_days (project_id, day, host, entries) SELECT project_id, ts - ts % 86400000, referrer + 200, count(*)
		  FROM page_views WHERE entry AND referrer <> 0 GROUP BY 1, 2, 3`,
		`VACUUM ANALYZE`, // the steady state autovacuum keeps: index-only scans read no table pages
	}
	args := [][]any{{project, ids, hashes, texts}, nil, {project}, {project, start.UnixMilli(), span, heavy},
		{project, start.UnixMilli(), span, total - heavy}, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
	for i, q := range steps {
		if _, err := conn.Exec(ctx, q, args[i]...); err != nil {
			return fmt.Errorf("seed step %d: %w", i, err)
		}
	}
	return nil
}

// explain logs the plans of the profile's and the Pages view's heaviest statements.
func explain(b *testing.B, url string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`SELECT count(*) FROM (SELECT minute - lag(minute) OVER (ORDER BY minute) AS gap
			FROM user_minutes WHERE person_ref = (SELECT min(id) FROM people)) m WHERE gap IS NULL OR gap > 1800000`,
		`SELECT path AS k, sum(views) AS n FROM page_path_days WHERE project_id = (SELECT min(id) FROM projects)
			AND day >= (SELECT max(day) - 30 * 86400000 FROM page_days) GROUP BY 1`,
	} {
		rows, err := conn.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS) `+q)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var line string
			rows.Scan(&line)
			b.Log(line)
		}
		rows.Close()
	}
}
