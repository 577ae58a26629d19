package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
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
	io0 := writeIO()
	parallelCPU(b, "event", func() error {
		_, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "load", Channel: "events",
			Event: "New Subscription", Description: "Ada upgraded to the yearly premium plan after the trial",
			Icon: "💰", UserID: "user-1042", Tags: tags, Parser: tidings.ParserText})
		return err
	}, func() { sqlite.WaitIndexed(ctx, db) }) // the full-text index's work is the publishes' too
	if io1 := writeIO(); io1.calls > 0 {
		b.ReportMetric(float64(io1.calls-io0.calls)/float64(b.N), "writes/event")
		b.ReportMetric(float64(io1.bytes-io0.bytes)/float64(b.N), "written-B/event")
	}
}

// ioCount is what /proc/self/io says the process has written: write calls and bytes
// handed to the kernel (zero where /proc is missing).
type ioCount struct{ calls, bytes int64 }

func writeIO() ioCount {
	var c ioCount
	data, _ := os.ReadFile("/proc/self/io")
	for _, line := range strings.Split(string(data), "\n") {
		name, value, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(value, 10, 64)
		switch name {
		case "syscw":
			c.calls = n
		case "wchar":
			c.bytes = n
		}
	}
	return c
}

// BenchmarkPublishDistinctUsers is BenchmarkPublishLoadEvent with a new user_id on each
// event, as a product's signups and payments name their own users: each batch creates
// (or counts) a person per event.
//
//	taskset -c 1 go test -run '^$' -bench PublishDistinctUsers -cpu 1 -benchtime 40000x ./sqlite
func BenchmarkPublishDistinctUsers(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	var n atomic.Int64
	parallelCPU(b, "event", func() error {
		_, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "load", Channel: "events",
			Event: "New Subscription", Description: "upgraded to the yearly premium plan after the trial",
			Icon: "💰", UserID: fmt.Sprintf("user-%d", n.Add(1)), Parser: tidings.ParserText})
		return err
	}, func() { sqlite.WaitIndexed(ctx, db) })
}

// BenchmarkIdentify sets two properties of a new user per call from 64 clients (POST
// /v1/identify without HTTP):
//
//	taskset -c 1 go test -run '^$' -bench Identify -cpu 1 -benchtime 20000x ./sqlite
func BenchmarkIdentify(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	props := tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}, {Key: "seats", Kind: tidings.KindNumber, Value: "3"}}
	var n atomic.Int64
	parallelCPU(b, "call", func() error {
		_, err := db.Identify(ctx, a.ID, &tidings.Identify{Project: "load", UserID: fmt.Sprintf("user-%d", n.Add(1)), Properties: props})
		return err
	}, nil)
}

// BenchmarkFinishDelivery ends outbox jobs from 64 deliverers at once (each a sent
// webhook or push), the writer's share of a notification:
//
//	taskset -c 1 go test -run '^$' -bench FinishDelivery -cpu 1 -benchtime 20000x ./sqlite
func BenchmarkFinishDelivery(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	now := time.Now()
	var ids []int64
	for len(ids) < b.N {
		jobs := make([]*tidings.Delivery, min(b.N-len(ids), 1000))
		for i := range jobs {
			jobs[i] = &tidings.Delivery{Kind: tidings.DeliverWebhook, AccountID: a.ID, Target: "wh", NextAt: now, CreatedAt: now}
		}
		for _, d := range jobs { // not ReplaceDelivery: it adds nothing for a job that is not there
			if err := db.EnqueueDelivery(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
		claimed, err := db.ClaimDeliveries(ctx, now, time.Hour, len(jobs))
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range claimed {
			ids = append(ids, d.ID)
		}
	}
	var next atomic.Int64
	parallelCPU(b, "job", func() error { return db.FinishDelivery(ctx, ids[next.Add(1)-1]) }, nil)
}

// BenchmarkFindProject looks up a project as nearly every read request does first
// (GET /v1/events, /v1/insights, a dashboard page):
//
//	taskset -c 1 go test -run '^$' -bench FindProject -cpu 1 ./sqlite
func BenchmarkFindProject(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.FindProject(ctx, a.ID, "load"); err != nil {
			b.Fatal(err)
		}
	}
}

// parallelCPU runs op b.N times in all from 64 clients (the group committer batches
// them), then settle (nil: nothing to wait for) whose work counts too, and reports the
// rate and the process's CPU time per op: "<unit>s/s" and "cpu-µs/<unit>".
func parallelCPU(b *testing.B, unit string, op func() error, settle func()) {
	b.SetParallelism(64)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if settle != nil {
		settle()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"s/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/"+unit)
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
	parallelCPU(b, "change", func() error {
		_, err := db.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "load", Title: "Signups", Value: "1", Change: "increment"})
		return err
	}, nil)
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
