package sqlite_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/sqlite"
)

// BenchmarkPublish measures durable event publishing from 64 concurrent clients, with
// group commit (batch up to 256) against the baseline of one transaction, and so one
// fsync, per event (MaxBatch 1). Compare the two lines' ns/op: their ratio is the gain.
//
//	go test -run '^$' -bench Publish -count 5 ./sqlite
func BenchmarkPublish(b *testing.B) {
	for _, c := range []struct {
		name     string
		maxBatch int
	}{{"one-per-tx", 1}, {"group-commit", 256}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{MaxBatch: c.maxBatch})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			a, _ := db.CreateAccount(ctx, "acme")
			db.CreateProject(ctx, a.ID, "my-saas")
			db.CreateChannel(ctx, a.ID, "my-saas", "payments")
			tags := tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}
			b.SetParallelism(32) // 2 cores × 32 = 64 clients
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					_, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments",
						Event: fmt.Sprint("New Subscription ", i), Tags: tags, Parser: tidings.ParserText})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkPublishLoadEvent publishes bench/load's event (4 tags, a user id, a
// description) from 64 clients through the group committer and reports the process's
// CPU time per event: the storage's share of a `/v1/log` request, with no HTTP. Run it
// on one core to compare with bench/load.sh's CPU per request:
//
//	taskset -c 1 go test -run '^$' -bench PublishLoadEvent -cpu 1 -count 3 ./sqlite
func BenchmarkPublishLoadEvent(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
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
	sqlite.WaitIndexed(ctx, db) // the full-text index's work is the publishes' too
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

// BenchmarkIncrementInsight increments one insight from 64 clients through the group
// committer (bench/load's increments, with no HTTP) and reports CPU time per change:
//
//	taskset -c 1 go test -run '^$' -bench IncrementInsight -cpu 1 -count 3 ./sqlite
func BenchmarkIncrementInsight(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	b.SetParallelism(64)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "load", Title: "Signups", Value: "1", Change: "increment"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/change")
}

// openLoad opens a store in a temporary folder with bench/load's account, project and
// channel.
func openLoad(b *testing.B) (*sqlite.DB, *tidings.Account) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	db.CreateProject(ctx, a.ID, "load")
	db.CreateChannel(ctx, a.ID, "load", "events")
	return db, a
}
