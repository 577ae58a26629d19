package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/sqlite"
)

// benchView is the n-th page view of the benchmarks: 2,000 users, 50 paths, a title,
// and a referrer from outside on one in four.
func benchView(n int64) tidings.PageView {
	v := tidings.PageView{UserID: fmt.Sprintf("user-%d", n%2000), Path: fmt.Sprintf("/docs/page-%d?utm_source=news", n%50),
		Title: fmt.Sprintf("Page %d of the docs", n%50), Timestamp: time.Now()}
	if n%4 == 0 {
		v.Referrer = "https://www.google.com/search?q=tidings"
	}
	return v
}

func checkedViews(b *testing.B, c *tidings.NewPageViews) *tidings.NewPageViews {
	var p tidings.Problems
	if c.Check(&p, time.Now(), true); p.Err() != nil {
		b.Fatal(p.Err())
	}
	return c
}

// BenchmarkPageViewVsEvent stores, from 64 clients through the group committer, b.N
// single events (bench/load's: 4 tags, a user id, a description, its full-text row
// waited for) and then b.N single page views (POST /v1/page of one view, without
// HTTP), and reports each one's CPU time and their ratio: the issue wants page views
// ingested at least as fast as events (view/event <= 1).
//
//	taskset -c 1 go test -run '^$' -bench PageViewVsEvent -cpu 1 -benchtime 20000x ./sqlite
func BenchmarkPageViewVsEvent(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	tags := tidings.Tags{
		{Key: "plan", Kind: tidings.KindString, Value: "premium"},
		{Key: "seats", Kind: tidings.KindNumber, Value: "3"},
		{Key: "region", Kind: tidings.KindString, Value: "eu-west"},
		{Key: "trial", Kind: tidings.KindBool, Value: "false"},
	}
	// Both kinds of rows exist before either is measured: no first-write costs in one only.
	addBenchViews(b, db, a.ID, 0, 200)
	b.ResetTimer()
	evCPU, evWall := measure(b, b.N, func(n int64) error {
		_, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "load", Channel: "events",
			Event: "New Subscription", Description: "Ada upgraded to the yearly premium plan after the trial",
			Icon: "💰", UserID: fmt.Sprintf("user-%d", n%2000), Tags: tags, Parser: tidings.ParserText})
		return err
	}, func() { sqlite.WaitIndexed(ctx, db) })
	pvCPU, pvWall := measure(b, b.N, func(n int64) error {
		return db.AddPageViews(ctx, a.ID, checkedViews(b, &tidings.NewPageViews{Project: "load", Host: "tidings.dev",
			Views: []tidings.PageView{benchView(n)}}))
	}, nil)
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(evCPU), "cpu-µs/event")
	b.ReportMetric(per(pvCPU), "cpu-µs/view")
	b.ReportMetric(float64(b.N)/evWall.Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/pvWall.Seconds(), "views/s")
	b.ReportMetric(float64(pvCPU)/float64(evCPU), "view/event-cpu")
}

// measure runs op n times in all from 64 goroutines, then settle, and answers the
// process's CPU time and the wall time they took.
func measure(b *testing.B, n int, op func(n int64) error, settle func()) (cpu, wall time.Duration) {
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu0, start := cpuTime(), time.Now()
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if settle != nil {
		settle()
	}
	return cpuTime() - cpu0, time.Since(start)
}

// addBenchViews stores views from..to in calls of 20 (the most one call carries), from
// 64 clients.
func addBenchViews(b *testing.B, db *sqlite.DB, accountID int64, from, to int64) {
	ctx := context.Background()
	calls := int((to - from + 19) / 20)
	measure(b, calls, func(i int64) error {
		c := &tidings.NewPageViews{Project: "load", Host: "tidings.dev"}
		for n := from + (i-1)*20; n < min(from+i*20, to); n++ {
			c.Views = append(c.Views, benchView(n))
		}
		return db.AddPageViews(ctx, accountID, checkedViews(b, c))
	}, nil)
}

// BenchmarkPageViewBytes stores 200,000 page views (2,000 users, 50 paths) and
// reports the bytes of page_views with its indexes per view (the target is at
// most 80), and those of the tables derived from them.
//
//	go test -run '^$' -bench PageViewBytes -benchtime 1x ./sqlite
func BenchmarkPageViewBytes(b *testing.B) {
	ctx := context.Background()
	const views = 200_000
	for range b.N {
		db, a := openLoad(b)
		addBenchViews(b, db, a.ID, 0, views)
		own, derived := viewBytes(b, db, views)
		start := time.Now()
		r, err := db.Check(ctx)
		if err != nil || !r.OK() {
			b.Fatalf("check: %v %v", err, r)
		}
		b.ReportMetric(time.Since(start).Seconds(), "check-s")
		for i, kind := range r.Checks {
			if r.Took[i] > 100*time.Millisecond {
				b.Logf("check %s took %v", kind, r.Took[i])
			}
		}
		b.ReportMetric(own, "B/view")
		b.ReportMetric(derived, "derived-B/view")
	}
}

// BenchmarkPageReads times a profile (FindPerson with its sessions, UserActivity) of a
// user with 100,000 page views over 90 days, and the Pages view of its project, which
// holds as many views of 20,000 other users on 500 paths (and of TIDINGS_BENCH_VIEWS
// more when set): the issue wants each within 100 ms.
//
//	go test -run '^$' -bench PageReads -benchtime 20x ./sqlite
func BenchmarkPageReads(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	others := int64(100_000)
	if n, err := strconv.ParseInt(os.Getenv("TIDINGS_BENCH_VIEWS"), 10, 64); err == nil {
		others = n
	}
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -90)
	span := int64(90 * 24 * 3600) // seconds
	const heavy = 100_000
	total := heavy + others
	measure(b, int((total+19)/20), func(i int64) error {
		c := &tidings.NewPageViews{Project: "load", Host: "tidings.dev"}
		for n := (i - 1) * 20; n < min(i*20, total); n++ {
			v := tidings.PageView{UserID: "heavy", Path: fmt.Sprintf("/app/%d", n%40)}
			if n >= heavy {
				v = tidings.PageView{UserID: fmt.Sprintf("user-%d", n%20_000), Path: fmt.Sprintf("/docs/%d", n%500)}
				if n%3 == 0 {
					v.Referrer = fmt.Sprintf("https://site-%d.example/", n%70)
				}
			}
			// Spread over the 90 days in a scrambled order, as many clients send.
			v.Timestamp = start.Add(time.Duration((n*7_919%total)*span/total) * time.Second)
			c.Views = append(c.Views, v)
		}
		return db.AddPageViews(ctx, a.ID, checkedViews(b, c))
	}, nil)
	viewBytes(b, db, total)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"FindPerson", func() error {
			u, err := db.FindPerson(ctx, a.ID, "load", "heavy")
			if err == nil && (u.PageViews != heavy || u.Sessions == 0) {
				err = fmt.Errorf("heavy: %d views, %d sessions", u.PageViews, u.Sessions)
			}
			return err
		}},
		{"UserActivity", func() error {
			_, err := db.UserActivity(ctx, a.ID, "load", "heavy", today.AddDate(0, 0, -tidings.ActivityDays))
			return err
		}},
		{"ListPageViews-user", func() error {
			_, err := db.ListPageViews(ctx, a.ID, tidings.PageViewQuery{Project: "load", UserID: "heavy", Limit: tidings.MaxPageViewsRead})
			return err
		}},
		{"PageStats-30d", func() error {
			_, err := db.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "load", From: today.AddDate(0, 0, -30), To: today.AddDate(0, 0, 1)})
			return err
		}},
		{"PageStats-366d", func() error {
			_, err := db.PageStats(ctx, a.ID, tidings.PageStatsQuery{Project: "load", From: today.AddDate(0, 0, -365), To: today.AddDate(0, 0, 1)})
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// viewBytes logs the bytes of each table and index of page views per view, and
// answers those of page_views with its indexes and those of the rest.
func viewBytes(b *testing.B, db *sqlite.DB, views int64) (own, derived float64) {
	sizes, err := sqlite.TableBytes(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	var parts []string
	for name, n := range sizes {
		switch {
		case strings.HasPrefix(name, "page_views"):
			own += float64(n) / float64(views)
		case strings.HasPrefix(name, "page_") || name == "user_minutes" || strings.HasPrefix(name, "sqlite_autoindex_page"):
			derived += float64(n) / float64(views)
		default:
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1f", name, float64(n)/float64(views)))
	}
	sort.Strings(parts)
	b.Logf("bytes per view: %s", strings.Join(parts, ", "))
	return own, derived
}
