// The timed reads of a seeded store: tidings' read paths over a realistic volume.

package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

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
		{"search: word + rare tag (signed tag:user:u-4242)", search("signed tag:user:u-4242", "", "")},
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
		// Words spelled like the full-text index's scope tokens (project shop is p1, its
		// busiest channel c1): they once read every event of the scope.
		{"hostile: a project's token (p1)", search("p1", "", "")},
		{"hostile: a channel's token (c1)", search("c1", "", "")},
		{"hostile: a tag's token (t1)", search("t1", "", "")},
		{"hostile: tokens in a channel (p1 c1 in payments)", search("p1 c1", "payments", "")},
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
		// The questions (charts and funnels), in the viewer's zone.
		{"question: events per day, 30 d", question(ctx, s, account, tidings.ChartParams{TZ: "Europe/Paris"})},
		{"question: 30 d, channel filter", question(ctx, s, account, tidings.ChartParams{Q: "channel:payments", TZ: "Europe/Paris"})},
		{"question: 30 d, split by channel", question(ctx, s, account, tidings.ChartParams{Split: "channel", TZ: "Europe/Paris"})},
		{"question: 30 d, common tag (plan:pro)", question(ctx, s, account, tidings.ChartParams{Q: "plan:pro", TZ: "Europe/Paris"})},
		{"question: 30 d, rare tag (tag:user:u-4242)", question(ctx, s, account, tidings.ChartParams{Q: "tag:user:u-4242", TZ: "Europe/Paris"})},
		{"question: 30 d, rare channel + word", question(ctx, s, account, tidings.ChartParams{Q: "channel:support paid", TZ: "Europe/Paris"})},
		{"question: 30 d, split by tag (plan)", question(ctx, s, account, tidings.ChartParams{Split: "tag:plan", TZ: "Europe/Paris"})},
		{"question: 30 d, rare channel split by tag", question(ctx, s, account, tidings.ChartParams{Q: "channel:support", Split: "tag:plan", TZ: "Europe/Paris"})},
		{"question: 30 d, unique users", question(ctx, s, account, tidings.ChartParams{Measure: "users", TZ: "Europe/Paris"})},
		{"question: 30 d, unique users, rare channel", question(ctx, s, account, tidings.ChartParams{Measure: "users", Q: "channel:support", TZ: "Europe/Paris"})},
		{"question: a year by hour (refused)", question(ctx, s, account, tidings.ChartParams{Bucket: "hour", Range: "12m"})},
		{"question: 3-step funnel, 30 d", funnel(ctx, s, account, []string{`event:"User Signed Up"`, `event:"New Subscription"`, `event:"Invoice Paid"`})},
		{"question: 3-step funnel, rare channel, 30 d", funnel(ctx, s, account, []string{`channel:support event:"User Signed Up"`, `channel:support event:"New Subscription"`, `channel:support event:"Invoice Paid"`})},
	}
	cases = append(cases, pageReads(ctx, s, account)...)
	fmt.Printf("\n%-40s %12s %12s\n", "read", "median", "max")
	for _, c := range cases {
		if !strings.Contains(c.name, only) {
			continue
		}
		// A question refused as too costly is timed too: what a refusal costs.
		refused := ""
		if err := c.run(); tidings.ErrorCode(err) == tidings.EValidation {
			refused = tidings.ErrorMessage(err)
		} else if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		var times []time.Duration
		for range runs {
			t0 := time.Now()
			if err := c.run(); err != nil && (refused == "" || tidings.ErrorCode(err) != tidings.EValidation) {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			times = append(times, time.Since(t0))
		}
		slices.Sort(times)
		fmt.Printf("%-40s %12v %12v\n", c.name, times[len(times)/2].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond))
		if refused != "" {
			fmt.Printf("%-40s %s\n", "", "(refused: "+refused+")")
		}
	}
	return nil
}

// question times a chart: its check and its answer.
func question(ctx context.Context, s tidings.Store, account int64, p tidings.ChartParams) func() error {
	return func() error {
		p.Project = "shop"
		q, err := tidings.ParseChart(p, time.Now())
		if err != nil {
			return err
		}
		_, err = charts.Answer(ctx, s, account, q)
		return err
	}
}

// funnel times a funnel over the last 30 days, in a week's window.
func funnel(ctx context.Context, s tidings.Store, account int64, steps []string) func() error {
	return func() error {
		q, err := tidings.ParseFunnel(tidings.FunnelParams{Project: "shop", Steps: steps, Window: "7d"}, time.Now())
		if err != nil {
			return err
		}
		_, err = charts.Funnel(ctx, s, account, q)
		return err
	}
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
