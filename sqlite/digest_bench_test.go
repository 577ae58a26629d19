package sqlite

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkDigestOf times the digest of the busiest project over a day and a week of a
// large store made by bench/seed (TIDINGS_BENCH_STORE):
//
//	go run ./bench/seed -data /tmp/big -events 200000 -days 7 && go run ./bench/seed -data /tmp/big -multiply 8
//	TIDINGS_BENCH_STORE=/tmp/big go test ./sqlite -run '^$' -bench DigestOf
func BenchmarkDigestOf(b *testing.B) {
	dir := os.Getenv("TIDINGS_BENCH_STORE")
	if dir == "" {
		b.Skip("set TIDINGS_BENCH_STORE to the data folder of a large store (bench/seed)")
	}
	ctx := context.Background()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a, err := db.FindAccount(ctx, "seed")
	if err != nil {
		b.Fatal(err)
	}
	// Periods that end half an hour off the hour (08:00 in India), as most do not.
	to := time.Now().UTC().Truncate(time.Hour).Add(-30 * time.Minute)
	for name, d := range map[string]time.Duration{"day": 24 * time.Hour, "week": 7 * 24 * time.Hour} {
		b.Run(name, func(b *testing.B) {
			var events int
			for b.Loop() {
				c, err := db.DigestOf(ctx, a.ID, "shop", to.Add(-d), to)
				if err != nil || c.Events == 0 {
					b.Fatal(err, c)
				}
				events = c.Events
			}
			b.ReportMetric(float64(events), "events")
		})
	}
}
