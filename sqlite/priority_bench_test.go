package sqlite

import (
	"context"
	"os"
	"testing"

	"github.com/tidings-dev/tidings"
)

// BenchmarkPriorityPages times pages of priority filters over a large store made by
// bench/seed (TIDINGS_BENCH_STORE). Seeded events have the default priority; the first
// run gives 0.2% of them urgent, 1% high and 5% low, in SQL:
//
//	TIDINGS_BENCH_STORE=/tmp/big go test ./sqlite -run '^$' -bench PriorityPages
func BenchmarkPriorityPages(b *testing.B) {
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
	var marked bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE priority <> 3)`).Scan(&marked); err != nil {
		b.Fatal(err)
	}
	if !marked {
		if _, err := db.write.ExecContext(ctx, `UPDATE events SET priority = CASE WHEN seq % 500 = 0 THEN 5
			WHEN seq % 100 = 7 THEN 4 WHEN seq % 20 = 3 THEN 2 ELSE 3 END`); err != nil {
			b.Fatal(err)
		}
	}
	a, err := db.FindAccount(ctx, "seed")
	if err != nil {
		b.Fatal(err)
	}
	for name, q := range map[string]tidings.EventQuery{
		"no filter":                     {},
		"urgent":                        {MinPriority: 5, MaxPriority: 5},
		">=high":                        {MinPriority: 4},
		"<=low":                         {MaxPriority: 2},
		">=default":                     {MinPriority: 3},
		"urgent, channel":               {Channel: "billing", MinPriority: 5, MaxPriority: 5},
		"urgent, tag":                   {Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, MinPriority: 5, MaxPriority: 5},
		"urgent, words":                 {Terms: []tidings.Term{{Words: []string{"payment"}}}, MinPriority: 5, MaxPriority: 5},
		"urgent, event name":            {Event: "Payment Failed", MinPriority: 5, MaxPriority: 5},
		"check walk (no index), urgent": {MinPriority: 5, MaxPriority: 5},
	} {
		q.Project, q.Limit = "shop", 50
		b.Run(name, func(b *testing.B) {
			if name == "check walk (no index), urgent" {
				p, err := db.FindProject(ctx, a.ID, "shop")
				if err != nil {
					b.Fatal(err)
				}
				// What a page would cost with the bounds only checked on the feed's walk.
				f := feedFilter{project: p.ID, limit: 51}
				eq := listQuery(f)
				eq.sql = eq.sql[:len(eq.sql)-len(` ORDER BY e.ts DESC, e.seq DESC LIMIT ?`)] + ` AND e.priority = 5 ORDER BY e.ts DESC, e.seq DESC LIMIT ?`
				for b.Loop() {
					evs, err := db.queryEvents(ctx, p, eq.sql, eq.args...)
					if err != nil || len(evs) == 0 {
						b.Fatal(err, len(evs))
					}
				}
				return
			}
			for b.Loop() {
				page, err := db.ListEvents(ctx, a.ID, q)
				if err != nil || len(page.Events) == 0 {
					b.Fatal(err, page)
				}
			}
		})
	}
}
