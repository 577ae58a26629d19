package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/sqlite"
)

// BenchmarkPageStatsMonths times the Pages view of a project whose 2,000 paths are
// each viewed every day of the last 365 (730,000 rows of paths' days; set
// TIDINGS_BENCH_PATHS for another number of paths), over ranges of 366, 90 and 30 days
// to tomorrow and of 11 months from a 16th to a 16th (the most days outside whole
// months), answering each range by the paths' days alone (before) and by their months
// and edge days (after) in turns, and reports both and their ratio. The answers are
// compared first.
//
//	go test -run '^$' -bench PageStatsMonths -benchtime 10x ./sqlite
func BenchmarkPageStatsMonths(b *testing.B) {
	ctx := context.Background()
	db, a := openLoad(b)
	paths := int64(2000)
	if n, err := strconv.ParseInt(os.Getenv("TIDINGS_BENCH_PATHS"), 10, 64); err == nil && n > 0 {
		paths = n
	}
	const days = 365
	today := time.Now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -days+1)
	total := paths * days
	start := time.Now()
	measure(b, int((total+19)/20), func(i int64) error {
		c := &tidings.NewPageViews{Project: "load", Host: "tidings.dev"}
		for n := (i - 1) * 20; n < min(i*20, total); n++ {
			// In a scrambled order, as many clients send: view n is of path n % paths
			// on day n / paths, an entry from one of 50 sites on one in five.
			m := n * 7_919 % total
			v := tidings.PageView{UserID: fmt.Sprint("user-", m%5000), Path: fmt.Sprint("/docs/", m%paths),
				Timestamp: first.AddDate(0, 0, int(m/paths)).Add(time.Duration(m%86_400) * time.Second)}
			if m%5 == 0 {
				v.Referrer = fmt.Sprintf("https://site-%d.example/", m%50)
			}
			c.Views = append(c.Views, v)
		}
		return db.AddPageViews(ctx, a.ID, checkedViews(b, c))
	}, nil)
	b.Logf("%d views stored in %v", total, time.Since(start).Round(time.Second))
	sixteenth := time.Date(today.Year(), today.Month(), 16, 0, 0, 0, 0, time.UTC)
	if sixteenth.After(today) {
		sixteenth = sixteenth.AddDate(0, -1, 0)
	}
	for _, r := range []struct {
		name     string
		from, to time.Time
	}{
		{"366d", today.AddDate(0, 0, -365), today.AddDate(0, 0, 1)},
		{"90d", today.AddDate(0, 0, -89), today.AddDate(0, 0, 1)},
		{"30d", today.AddDate(0, 0, -29), today.AddDate(0, 0, 1)},
		{"16th-to-16th", sixteenth.AddDate(0, -11, 0), sixteenth},
	} {
		q := tidings.PageStatsQuery{Project: "load", From: r.from, To: r.to}
		b.Run(r.name, func(b *testing.B) {
			want, err := sqlite.PageStatsByDays(ctx, db, a.ID, q)
			if err != nil {
				b.Fatal(err)
			}
			got, err := db.PageStats(ctx, a.ID, q)
			if err != nil {
				b.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || len(got.TopPages) != tidings.TopPagesShown {
				b.Fatalf("by months:\n%+v\nby days:\n%+v", got, want)
			}
			var before, after time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := sqlite.PageStatsByDays(ctx, db, a.ID, q); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := db.PageStats(ctx, a.ID, q); err != nil {
					b.Fatal(err)
				}
				before, after = before+t1.Sub(t0), after+time.Since(t1)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(ms(before), "days-ms")
			b.ReportMetric(ms(after), "months-ms")
			b.ReportMetric(float64(after)/float64(before), "months/days")
		})
	}
}
