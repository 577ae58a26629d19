// Page views: seeding them through the store's own path (AddPageViews), and the reads
// of a profile and of the Pages view over them.

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidings-dev/tidings"
)

// heavyUser is the user of project shop who gets -heavy page views: the profile timed
// by -reads is theirs.
const heavyUser = "user-heavy"

var referrerHosts = []string{"https://www.google.com/search", "https://news.ycombinator.com/item", "https://twitter.com/x",
	"https://www.reddit.com/r/selfhosted", "https://duckduckgo.com/", "https://github.com/tidings-dev/tidings",
	"https://www.bing.com/search", "https://lobste.rs/s/abc", "https://dev.to/post", "https://t.co/xyz"}

// pageViewBatch makes one call of views of one user, as ls.js sends them: up to 20
// views seconds apart, a few thousand paths (the first ones far more visited), an
// external referrer on about a third of the first views.
func pageViewBatch(r *rand.Rand, user string, n int, at time.Time) *tidings.NewPageViews {
	c := &tidings.NewPageViews{Project: "shop", Host: "shop.example.com"}
	for i := range n {
		p := r.IntN(2_000)
		if r.IntN(2) == 0 {
			p = r.IntN(40)
		}
		v := tidings.PageView{UserID: user, Path: fmt.Sprintf("/p/%d", p), Title: fmt.Sprintf("Page %d — Shop", p),
			Timestamp: at.Add(time.Duration(i*7) * time.Second)}
		switch {
		case i == 0 && r.IntN(3) == 0:
			v.Referrer = referrerHosts[r.IntN(len(referrerHosts))]
		case i > 0:
			v.Referrer = "https://shop.example.com/p/1"
		}
		c.Views = append(c.Views, v)
	}
	return c
}

// seedPageViews adds n page views to project shop over days up to now, among 100,000
// users, and heavy more for heavyUser, in calls of 10 views.
func seedPageViews(ctx context.Context, s tidings.Store, account int64, n, heavy, days, workers int) error {
	span := time.Duration(days) * 24 * time.Hour
	start := time.Now().Add(-span)
	total := n + heavy
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	began := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				i := int(next.Add(10)) - 10
				if i >= total {
					return
				}
				user := fmt.Sprintf("user-%d", r.IntN(100_000))
				if i >= n {
					user = heavyUser
				}
				at := start.Add(time.Duration(float64(span) * float64(i) / float64(total))).Truncate(time.Millisecond)
				c := pageViewBatch(r, user, min(10, total-i), at)
				var p tidings.Problems
				c.Check(&p, time.Now(), true)
				if err := p.Err(); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if err := s.AddPageViews(ctx, account, c); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if d := done.Add(int64(len(c.Views))); d%1_000_000 < 10 {
					fmt.Printf("  %d of %d page views, %.0f/s\n", d, total, float64(d)/time.Since(began).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(began)
	fmt.Printf("seeded %d page views in %v: %.0f views/s\n", done.Load(), d.Round(time.Millisecond), float64(done.Load())/d.Seconds())
	return firstErr
}

type read = struct {
	name string
	run  func() error
}

// pageReads are the reads of a profile (heavyUser's) and of the Pages view.
func pageReads(ctx context.Context, s tidings.Store, account int64) []read {
	day := time.Now().UTC().Truncate(24 * time.Hour)
	stats := func(days int) func() error {
		return func() error {
			_, err := s.PageStats(ctx, account, tidings.PageStatsQuery{Project: "shop", From: day.AddDate(0, 0, 1-days), To: day.AddDate(0, 0, 1)})
			return err
		}
	}
	return []read{
		{"profile: heavy user (person + activity)", func() error {
			if _, err := s.FindPerson(ctx, account, "shop", heavyUser); err != nil {
				return err
			}
			_, err := s.UserActivity(ctx, account, "shop", heavyUser, day.AddDate(0, 0, 1-tidings.ActivityDays))
			return err
		}},
		{"profile: heavy user, last 100 views", func() error {
			_, err := s.ListPageViews(ctx, account, tidings.PageViewQuery{Project: "shop", UserID: heavyUser, Limit: 100})
			return err
		}},
		{"profile: a typical user (person + activity)", func() error {
			if _, err := s.FindPerson(ctx, account, "shop", "user-4242"); err != nil && tidings.ErrorCode(err) != tidings.ENotFound {
				return err
			}
			_, err := s.UserActivity(ctx, account, "shop", "user-4242", day.AddDate(0, 0, 1-tidings.ActivityDays))
			if tidings.ErrorCode(err) == tidings.ENotFound {
				return nil
			}
			return err
		}},
		{"pages view: 7 d", stats(7)},
		{"pages view: 30 d", stats(30)},
		{"pages view: 90 d", stats(90)},
		{"pages view: 12 m", stats(365)},
		{"page views: first page, project", func() error {
			_, err := s.ListPageViews(ctx, account, tidings.PageViewQuery{Project: "shop", Limit: 50})
			return err
		}},
	}
}
