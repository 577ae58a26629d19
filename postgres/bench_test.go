package postgres_test

import (
	"context"
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
