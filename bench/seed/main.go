// Command seed fills a store with many realistic events through the store's own batch
// path (PublishEvent and its group commit), then can time the reads a dashboard and the
// API make over it. It is how docs/performance.md measures reads at 10 million events.
//
//	go run ./bench/seed -data /tmp/big -events 10000000      # seed
//	go run ./bench/seed -data /tmp/big -reads                # time the reads, medians
//	go run ./bench/seed -data /tmp/big -multiply 8           # 8× the events, fast (SQLite)
//	go run ./bench/seed -data /tmp/big -views 10000000 -heavy 100000 -days 365   # page views
//
// -database postgres://… seeds and reads PostgreSQL instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
	"github.com/tidings-dev/tidings/sqlite"
)

// The shape of the seeded data: an account with a busy project and a few quiet ones.
var (
	accountName = "seed"
	projects    = []struct {
		name  string
		share float64 // of all events
	}{{"shop", 0.70}, {"api", 0.25}, {"blog", 0.05}}
	channels = []string{"payments", "signups", "deploys", "errors", "jobs", "audit", "billing", "support"}
	// channelShare: the first channels are busy, the last one rare (1 event in 500).
	channelShare = []float64{0.30, 0.25, 0.15, 0.12, 0.10, 0.05, 0.028, 0.002}
	names        = []string{"New Subscription", "User Signed Up", "Deploy Finished", "Payment Failed", "Password Reset",
		"Invoice Paid", "Job Retried", "Trial Ended", "Refund Issued", "Export Ready"}
	icons = []string{"💰", "👋", "🚀", "🔥", "🔑", "🧾", "🔁", "⏳", "↩️", "📦"}
)

func main() {
	data := flag.String("data", "", "data folder of an embedded (SQLite) store")
	dbURL := flag.String("database", "", "or a PostgreSQL URL")
	events := flag.Int("events", 0, "events to add")
	views := flag.Int("views", 0, "page views to add to project shop, among 100,000 users")
	heavy := flag.Int("heavy", 0, "page views to add for one user of project shop ("+heavyUser+"), whose profile -reads times")
	days := flag.Int("days", 30, "the events' timestamps span this many days up to now")
	workers := flag.Int("workers", 4096, "concurrent publishers (the group commit batches them)")
	batch := flag.Int("batch", 2048, "most events per committed batch (SQLite; the server's default is 256)")
	reads := flag.Bool("reads", false, "time the dashboard's and API's reads over the store")
	runs := flag.Int("runs", 7, "times each read is run (the median is printed)")
	stats := flag.Bool("stats", false, "print the SQLite store's bytes per event, table by table (dbstat)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	only := flag.String("only", "", "time only the reads whose name contains this")
	multiply := flag.Int("multiply", 0, "SQLite: copy the stored events in SQL until there are this many times as many, with every derived row, then index the copies for search (a 10-million-event store in minutes, not an hour)")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	ctx := context.Background()
	var store tidings.Store
	var err error
	switch {
	case *dbURL != "":
		store, err = postgres.Open(ctx, *dbURL, postgres.Options{MaxConns: 16, Log: slog.Default()})
	case *data != "":
		store, err = sqlite.Open(ctx, *data, sqlite.Options{MaxBatch: *batch, Log: slog.Default()})
	default:
		err = fmt.Errorf("give -data DIR or -database URL")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(2)
	}
	defer store.Close()
	account, err := setUp(ctx, store)
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
	if *events > 0 {
		if err := seed(ctx, store, account, *events, *days, *workers); err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
	}
	if *views > 0 || *heavy > 0 {
		if err := seedPageViews(ctx, store, account, *views, *heavy, *days, 64); err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
	}
	if *reads {
		if err := timeReads(ctx, store, account, *runs, *only); err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
	}
	if *multiply > 1 {
		if *data == "" {
			fmt.Fprintln(os.Stderr, "seed: -multiply works on an embedded store (-data)")
			os.Exit(2)
		}
		store.Close()
		if err := multiplyEvents(ctx, filepath.Join(*data, sqlite.FileName), *multiply); err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
		// Opening the store indexes the copies for search (the backfill of migration 7).
		began := time.Now()
		if store, err = sqlite.Open(ctx, *data, sqlite.Options{Log: slog.Default()}); err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
		fmt.Printf("indexed the copies for search in %v\n", time.Since(began).Round(time.Second))
	}
	if *data != "" {
		store.Close() // checkpoints the WAL into the file
		if *stats {
			if err := printStats(filepath.Join(*data, sqlite.FileName)); err != nil {
				fmt.Fprintln(os.Stderr, "seed:", err)
				os.Exit(1)
			}
		}
		if fi, err := os.Stat(filepath.Join(*data, sqlite.FileName)); err == nil {
			fmt.Printf("store file: %.1f MB\n", float64(fi.Size())/1e6)
		}
	}
}

// setUp makes (or finds) the account, projects and channels.
func setUp(ctx context.Context, s tidings.Store) (int64, error) {
	acc, err := s.FindAccount(ctx, accountName)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		acc, err = s.CreateAccount(ctx, accountName)
	}
	if err != nil {
		return 0, err
	}
	for _, p := range projects {
		if _, err := s.CreateProject(ctx, acc.ID, p.name); err != nil && tidings.ErrorCode(err) != tidings.EConflict {
			return 0, err
		}
		for _, c := range channels {
			if _, err := s.CreateChannel(ctx, acc.ID, p.name, c); err != nil && tidings.ErrorCode(err) != tidings.EConflict {
				return 0, err
			}
		}
	}
	return acc.ID, nil
}

func pick(r *rand.Rand, shares []float64) int {
	x := r.Float64()
	for i, s := range shares {
		if x < s {
			return i
		}
		x -= s
	}
	return len(shares) - 1
}

// event makes the i-th of n events: 3–5 tags (common ones like plan and region, a
// user tag among 200,000, and on 1% of events a unique order tag), a user id among
// 100,000, a short description, or on one event in ten a Markdown report.
func event(r *rand.Rand, i, n int, start time.Time, span time.Duration) *tidings.NewEvent {
	pi := pick(r, []float64{projects[0].share, projects[1].share, projects[2].share})
	k := r.IntN(len(names))
	e := &tidings.NewEvent{
		Project: projects[pi].name, Channel: channels[pick(r, channelShare)], Event: names[k], Icon: icons[k],
		UserID:    fmt.Sprintf("user-%d", r.IntN(100_000)),
		Timestamp: start.Add(time.Duration(float64(span) * float64(i) / float64(n))).Add(-time.Duration(r.IntN(60)) * time.Second).Truncate(time.Millisecond),
		Tags: tidings.Tags{
			{Key: "plan", Kind: tidings.KindString, Value: []string{"free", "pro", "team"}[r.IntN(3)]},
			{Key: "region", Kind: tidings.KindString, Value: []string{"eu-west", "eu-central", "us-east", "us-west", "ap-south", "ap-east", "sa-east", "af-south"}[r.IntN(8)]},
			{Key: "user", Kind: tidings.KindString, Value: fmt.Sprintf("u-%d", r.IntN(200_000))},
		},
	}
	if r.IntN(2) == 0 {
		e.Tags = append(e.Tags, tidings.Tag{Key: "version", Kind: tidings.KindString, Value: fmt.Sprintf("v1.%d", r.IntN(50))})
	}
	if r.IntN(100) == 0 {
		e.Tags = append(e.Tags, tidings.Tag{Key: "order", Kind: tidings.KindString, Value: fmt.Sprintf("ord-%d", i)})
	}
	if r.IntN(10) == 0 {
		e.Parser = "markdown"
		e.Description = fmt.Sprintf("## Report %d\n\n- status: **ok**\n- took `%d ms`\n- [details](https://example.com/r/%d)\n\n| step | ms |\n|---|---|\n| build | %d |\n| test | %d |\n",
			i, r.IntN(900), i, r.IntN(500), r.IntN(500))
	} else {
		e.Description = fmt.Sprintf("Customer %d on the %s plan, order of %d.%02d EUR", r.IntN(100_000), e.Tags[0].Value, r.IntN(500), r.IntN(100))
	}
	return e
}

func seed(ctx context.Context, s tidings.Store, account int64, n, days, workers int) error {
	span := time.Duration(days) * 24 * time.Hour
	start := time.Now().Add(-span)
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	began := time.Now()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				d := done.Load()
				fmt.Printf("  %d of %d events, %.0f/s\n", d, n, float64(d)/time.Since(began).Seconds())
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := s.PublishEvent(ctx, account, event(r, i, n, start, span)); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	d := time.Since(began)
	fmt.Printf("seeded %d events in %v: %.0f events/s\n", done.Load(), d.Round(time.Millisecond), float64(done.Load())/d.Seconds())
	return firstErr
}
