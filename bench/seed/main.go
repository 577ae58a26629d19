// Command seed fills a store with many realistic events through the store's own batch
// path (PublishEvent and its group commit), then can time the reads a dashboard and the
// API make over it. It is how docs/performance.md measures reads at 10 million events.
//
//	go run ./bench/seed -data /tmp/big -events 10000000      # seed
//	go run ./bench/seed -data /tmp/big -reads                # time the reads, medians
//	go run ./bench/seed -data /tmp/big -multiply 8           # 8× the events, fast (SQLite)
//
// -database postgres://… seeds and reads PostgreSQL instead.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
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

// timeReads runs each read the feed, the settings pages and the charts make, and prints
// the median time of runs. Each read is first run once to warm the cache, as on a
// server that has been up a while.
func timeReads(ctx context.Context, s tidings.Store, account int64, runs int, only string) error {
	first, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Limit: 50})
	if err != nil {
		return err
	}
	if len(first.Events) == 0 {
		return fmt.Errorf("no events in project shop: seed first")
	}
	// A cursor deep in the feed: the 1,000th page's worth back, found by ID.
	deep, err := deepCursor(ctx, s, account)
	if err != nil {
		return err
	}
	latest := first.Events[0].ID
	tag := func(k, v string) []tidings.Tag { return []tidings.Tag{{Key: k, Value: v}} }
	day := time.Now().UTC().Truncate(24 * time.Hour)
	search := func(q, channel, before string) func() error {
		return func() error {
			parsed, err := tidings.ParseSearch(q, time.Now())
			if err != nil {
				return err
			}
			eq := tidings.EventQuery{Project: "shop", Channel: channel, Before: before, Limit: 50}
			eq.AddSearch(parsed)
			_, err = s.ListEvents(ctx, account, eq)
			return err
		}
	}
	cases := []struct {
		name string
		run  func() error
	}{
		{"first page, project", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Limit: 50})
			return err
		}},
		{"first page, channel", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Channel: "signups", Limit: 50})
			return err
		}},
		{"first page, rare channel", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Channel: "support", Limit: 50})
			return err
		}},
		{"deep page (before=, ~25% back)", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Before: deep, Limit: 50})
			return err
		}},
		{"common tag (plan=pro)", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Tags: tag("plan", "pro"), Limit: 50})
			return err
		}},
		{"rare tag (user=u-4242)", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Tags: tag("user", "u-4242"), Limit: 50})
			return err
		}},
		{"common tag + rare channel", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Channel: "support", Tags: tag("plan", "pro"), Limit: 50})
			return err
		}},
		{"rare tag + busy channel", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Channel: "payments", Tags: tag("user", "u-4242"), Limit: 50})
			return err
		}},
		{"two tags (plan + region)", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop",
				Tags: []tidings.Tag{{Key: "plan", Value: "team"}, {Key: "region", Value: "eu-west"}}, Limit: 50})
			return err
		}},
		{"search: common word (paid)", search("paid", "", "")},
		{"search: rare word (4242)", search("4242", "", "")},
		{"search: absent word (zebra)", search("zebra", "", "")},
		{"search: prefix (subscr*)", search("subscr*", "", "")},
		{"search: phrase (\"payment failed\")", search(`"payment failed"`, "", "")},
		{"search: word + common tag (failed plan:pro)", search("failed plan:pro", "", "")},
		{"search: word + rare tag (signed user:u-4242)", search("signed user:u-4242", "", "")},
		{"search: word in the rare channel (paid)", search("paid", "support", "")},
		{"search: deep page (paid, before=)", search("paid", "", deep)},
		{"search: time range (since:1d)", search("since:1d", "", "")},
		{"search: word + time range (failed since:1d)", search("failed since:1d", "", "")},
		// Hostile shapes (the second audit's and others): each must stay bounded.
		{"hostile: 8 prefixes + before:2001", search("customer* free* eur* order* plan* the* on* of* before:2001-01-01", "", "")},
		{"hostile: 8 prefixes", search("customer* free* eur* order* plan* the* on* of*", "", "")},
		{"hostile: two-letter prefixes (on* of* th*)", search("on* of* th*", "", "")},
		{"hostile: common prefix + absent prefix (customer* zz*)", search("customer* zz*", "", "")},
		{"hostile: common prefix + rare word (customer* 4242)", search("customer* 4242", "", "")},
		{"hostile: common prefix + before:2001 (pa*)", search("pa* before:2001-01-01", "", "")},
		{"hostile: common word + before:2001 (paid)", search("paid before:2001-01-01", "", "")},
		{"hostile: common word + after:tomorrow (paid)", search("paid after:"+time.Now().Add(48*time.Hour).Format("2006-01-02"), "", "")},
		{"hostile: 8 common words", search("new subscription user signed up deploy finished paid", "", "")},
		{"hostile: common words, none together (paid signed)", search("paid signed", "", "")},
		{"hostile: absent prefix (zz*)", search("zz*", "", "")},
		{"a user's journey (user-4242)", func() error {
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Users: []string{"user-4242"}, Limit: 50})
			return err
		}},
		{"a group's journey (100 members)", func() error {
			users := make([]string, tidings.MaxQueryUsers)
			for i := range users {
				users[i] = fmt.Sprintf("user-%d", i*97)
			}
			_, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Users: users, Limit: 50})
			return err
		}},
		{"open a live stream (catch-up)", func() error {
			if _, err := s.CountEventsAfter(ctx, account, "shop", latest, 1001); err != nil {
				return err
			}
			_, err := s.EventsAfter(ctx, account, "shop", latest, 100)
			return err
		}},
		{"open a live stream from 1 min ago", func() error {
			_, err := s.CountEventsAfter(ctx, account, "shop", tidings.EventIDFloor(time.Now().Add(-time.Minute)), 1001)
			return err
		}},
		{"chart: 30 days by day", func() error {
			_, err := s.CountEventsBy(ctx, account, "shop", "", day.Add(-29*24*time.Hour), 24*time.Hour)
			return err
		}},
		{"chart: 24 hours by hour", func() error {
			_, err := s.CountEventsBy(ctx, account, "shop", "", time.Now().UTC().Truncate(time.Hour).Add(-23*time.Hour), time.Hour)
			return err
		}},
		{"settings: count per project", func() error {
			for _, p := range projects {
				if _, err := s.CountEvents(ctx, account, p.name, ""); err != nil {
					return err
				}
			}
			return nil
		}},
		{"settings: count per channel", func() error {
			for _, c := range channels {
				if _, err := s.CountEvents(ctx, account, "shop", c); err != nil {
					return err
				}
			}
			return nil
		}},
		{"insight board", func() error { _, err := s.ListInsights(ctx, account, "shop"); return err }},
	}
	fmt.Printf("\n%-40s %12s %12s\n", "read", "median", "max")
	for _, c := range cases {
		if !strings.Contains(c.name, only) {
			continue
		}
		if err := c.run(); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		var times []time.Duration
		for range runs {
			t0 := time.Now()
			if err := c.run(); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			times = append(times, time.Since(t0))
		}
		slices.Sort(times)
		fmt.Printf("%-40s %12v %12v\n", c.name, times[len(times)/2].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond))
	}
	return nil
}

// deepCursor finds an event about a quarter of the way back in project shop by paging
// with big pages (the API's limit is 100; the store takes what it is given).
func deepCursor(ctx context.Context, s tidings.Store, account int64) (string, error) {
	n, err := s.CountEvents(ctx, account, "shop", "")
	if err != nil {
		return "", err
	}
	before := ""
	for left := n / 4; left > 0; {
		page, err := s.ListEvents(ctx, account, tidings.EventQuery{Project: "shop", Before: before, Limit: min(left, 100_000)})
		if err != nil || len(page.Events) == 0 {
			return before, err
		}
		before = page.Events[len(page.Events)-1].ID
		left -= len(page.Events)
	}
	return before, nil
}

// printStats prints each table's and index's size per stored event (SQLite's dbstat).
func printStats(file string) error {
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var events int64
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&events); err != nil || events == 0 {
		return fmt.Errorf("no events to measure (%v)", err)
	}
	rows, err := db.Query(`SELECT name, sum(pgsize) FROM dbstat GROUP BY name HAVING sum(pgsize) > 65536 ORDER BY 2 DESC`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Printf("\n%d events\n%-28s %12s %12s\n", events, "table or index", "MB", "bytes/event")
	var total int64
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			return err
		}
		total += size
		fmt.Printf("%-28s %12.1f %12.1f\n", name, float64(size)/1e6, float64(size)/float64(events))
	}
	fmt.Printf("%-28s %12.1f %12.1f\n", "all (over 64 KiB)", float64(total)/1e6, float64(total)/float64(events))
	return rows.Err()
}

// multiplyEvents copies the store's events until there are k times as many: each copy
// takes new seqs after the last one and new ids (the UUIDv7's time, new random bits; a
// BLOB, as || makes text),
// and keeps the original's timestamps, so every derived structure grows in step: the
// tag index gets the copies' rows, tag, hourly and per-user counts are multiplied, and
// the full-text index is emptied with every event left to the search backfill, which
// the next open of the store runs. Each copy is one transaction.
func multiplyEvents(ctx context.Context, file string, k int) error {
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var last int64
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&last); err != nil || last == 0 {
		return fmt.Errorf("no events to copy (%v)", err)
	}
	began := time.Now()
	for i := 1; i < k; i++ {
		off := int64(i) * last
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`INSERT INTO events (seq, id, project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at)
				SELECT seq + ?1, CAST(substr(id, 1, 8) || randomblob(8) AS BLOB), project_id, channel_id, event, description, icon, notify, tags, parser, user_id, ts, created_at
				FROM events WHERE seq <= ?2 ORDER BY seq`,
			`INSERT INTO event_tags (tag_id, ts, seq, channel_id) SELECT tag_id, ts, seq + ?1, channel_id FROM event_tags WHERE seq <= ?2`,
		} {
			if _, err := tx.ExecContext(ctx, q, off, last); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return err
		}
		fmt.Printf("  copy %d of %d: %v\n", i, k-1, time.Since(began).Round(time.Second))
	}
	for _, q := range []string{
		fmt.Sprintf(`UPDATE tags SET count = count * %d`, k),
		fmt.Sprintf(`UPDATE event_counts SET n = n * %d`, k),
		fmt.Sprintf(`UPDATE people SET events = events * %d`, k),
		fmt.Sprintf(`UPDATE event_seq SET last = %d`, last*int64(k)),
		`INSERT INTO events_fts (events_fts) VALUES ('delete-all')`,
		fmt.Sprintf(`UPDATE search_backfill SET next_seq = %d`, last*int64(k)),
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
