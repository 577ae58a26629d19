package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
)

// BenchmarkPublishLoadEvent publishes bench/load's event (4 tags, a user id, a
// description) from 64 clients through the group committer, on the database of
// TIDINGS_TEST_DATABASE_URL (a schema of its own), and reports events per second and
// this process's CPU time per event (the server's is not in it). Its four tags are
// rolled after 100 events (the threshold lowered from tidings.TagRollup), so that
// every batch but the first few keeps their hourly counts too, as a store's batches
// do for its common tags:
//
//	taskset -c 1 go test -run '^$' -bench PublishLoadEvent -cpu 1 -benchtime 4000x -count 5 ./postgres
func BenchmarkPublishLoadEvent(b *testing.B) {
	ctx := context.Background()
	db := openBench(b)
	postgres.SetTagRollup(db, 100)
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	db.CreateProject(ctx, a.ID, "load")
	db.CreateChannel(ctx, a.ID, "load", "events")
	tags := tidings.Tags{
		{Key: "plan", Kind: tidings.KindString, Value: "premium"},
		{Key: "seats", Kind: tidings.KindNumber, Value: "3"},
		{Key: "region", Kind: tidings.KindString, Value: "eu-west"},
		{Key: "trial", Kind: tidings.KindBool, Value: "false"},
	}
	b.SetParallelism(64)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "load", Channel: "events",
				Event: "New Subscription", Description: "Ada upgraded to the yearly premium plan after the trial",
				Icon: "💰", UserID: "user-1042", Tags: tags, Parser: tidings.ParserText})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/event")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func openBench(b *testing.B) *postgres.DB {
	db, err := postgres.Open(context.Background(), pgtest.URL(b), postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkPageViewsVsEvents publishes b.N of bench/load's events, then stores b.N page
// views (one a call, as ls.js sends a page load's), each from 64 clients through the
// group committer, on one store, and reports both rates and their ratio (views/events:
// above 1, views are stored faster):
//
//	taskset -c 1 go test -run '^$' -bench PageViewsVsEvents -cpu 1 -benchtime 4000x -count 5 ./postgres
func BenchmarkPageViewsVsEvents(b *testing.B) {
	ctx := context.Background()
	db := openBench(b)
	postgres.SetTagRollup(db, 100)
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	db.CreateProject(ctx, a.ID, "load")
	db.CreateChannel(ctx, a.ID, "load", "events")
	tags := tidings.Tags{
		{Key: "plan", Kind: tidings.KindString, Value: "premium"},
		{Key: "seats", Kind: tidings.KindNumber, Value: "3"},
		{Key: "region", Kind: tidings.KindString, Value: "eu-west"},
		{Key: "trial", Kind: tidings.KindBool, Value: "false"},
	}
	publish := func(i int) error {
		_, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "load", Channel: "events",
			Event: "New Subscription", Description: "Ada upgraded to the yearly premium plan after the trial",
			Icon: "💰", UserID: "user-1042", Tags: tags, Parser: tidings.ParserText})
		return err
	}
	// A site of 50 pages, a visitor in 20 arriving from a search engine.
	view := func(i int) error {
		ref := "https://shop.example/pricing"
		if i%20 == 0 {
			ref = "https://www.google.com/"
		}
		c := &tidings.NewPageViews{Project: "load", Host: "shop.example", Views: []tidings.PageView{{UserID: fmt.Sprintf("user-%d", i%500),
			Path: fmt.Sprintf("/docs/page-%d?utm_source=news&token=secret", i%50), Title: "Docs — page", Referrer: ref}}}
		var p tidings.Problems
		c.Check(&p, time.Now(), false)
		if err := p.Err(); err != nil {
			return err
		}
		return db.AddPageViews(ctx, a.ID, c)
	}
	// run calls fn b.N times from 64 clients; it returns the time and this process's CPU.
	run := func(fn func(i int) error) (wall, cpu time.Duration) {
		var next atomic.Int64
		var wg sync.WaitGroup
		cpu0, start := cpuTime(), time.Now()
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)); i <= b.N; i = int(next.Add(1)) {
					if err := fn(i); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start), cpuTime() - cpu0
	}
	b.ResetTimer()
	eventsWall, eventsCPU := run(publish)
	viewsWall, viewsCPU := run(view)
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(n/eventsWall.Seconds(), "events/s")
	b.ReportMetric(n/viewsWall.Seconds(), "views/s")
	b.ReportMetric(eventsWall.Seconds()/viewsWall.Seconds(), "views/events")
	b.ReportMetric(float64(eventsCPU.Microseconds())/n, "cpu-µs/event")
	b.ReportMetric(float64(viewsCPU.Microseconds())/n, "cpu-µs/view")
}
