package sqlite_test

import (
	"context"
	"fmt"
	"testing"

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
