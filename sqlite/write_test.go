package sqlite

import (
	"context"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

// Deleting a channel takes its events out of the tag index and the counts.
func TestDeleteChannelKeepsCountsRight(t *testing.T) {
	t.Parallel()
	db, a := openShop(t)
	ctx := t.Context()
	for _, c := range []string{"payments", "signups"} {
		db.CreateChannel(ctx, a.ID, "shop", c)
	}
	pro := tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}
	for i := range 10 {
		ch := []string{"payments", "signups"}[i%2]
		if _, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: ch, Event: "e", Tags: pro}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteChannel(ctx, a.ID, "shop", "signups"); err != nil {
		t.Fatal(err)
	}
	var tagCount, rows int
	db.read.QueryRow(`SELECT count FROM tags WHERE key = 'plan'`).Scan(&tagCount)
	db.read.QueryRow(`SELECT count(*) FROM event_tags`).Scan(&rows)
	if tagCount != 5 || rows != 5 {
		t.Fatalf("tag count %d, tag rows %d; want 5 and 5", tagCount, rows)
	}
	if n, _ := db.CountEvents(ctx, a.ID, "shop", ""); n != 5 {
		t.Fatalf("project count %d, want 5", n)
	}
	page, err := db.ListEvents(ctx, a.ID, tidings.EventQuery{Project: "shop", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, Limit: 50})
	if err != nil || len(page.Events) != 5 {
		t.Fatalf("tag filter after delete: %v, %d events", err, len(page.Events))
	}
}

// In one batch, events refused for an unknown project or channel leave no trace and do
// not fail the events beside them; a project that creates channels gets them.
func TestRefusedEventsInABatch(t *testing.T) {
	t.Parallel()
	db, a := openShop(t)
	ctx := t.Context()
	db.CreateChannel(ctx, a.ID, "shop", "payments")
	db.CreateProject(ctx, a.ID, "auto")
	db.SetAutoCreateChannels(ctx, a.ID, "auto", true)
	tags := tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro"}}
	cases := []struct {
		project, channel string
		want             string
	}{{"shop", "payments", ""}, {"nope", "payments", tidings.EProjectNotFound}, {"shop", "nope", tidings.EChannelNotFound},
		{"auto", "new-one", ""}, {"shop", "payments", ""}}
	var wg sync.WaitGroup
	errs := make([]error, len(cases)*20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cases[i%len(cases)]
			_, errs[i] = db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: c.project, Channel: c.channel, Event: "e", Tags: tags})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if want := cases[i%len(cases)].want; tidings.ErrorCode(err) != want {
			t.Fatalf("case %d: %v, want %q", i%len(cases), err, want)
		}
	}
	var events, tagRows, tagCount int
	db.read.QueryRow(`SELECT count(*) FROM events`).Scan(&events)
	db.read.QueryRow(`SELECT count(*) FROM event_tags`).Scan(&tagRows)
	db.read.QueryRow(`SELECT sum(count) FROM tags`).Scan(&tagCount)
	if events != 60 || tagRows != 60 || tagCount != 60 {
		t.Fatalf("events %d, tag rows %d, tag counts %d; want 60 each", events, tagRows, tagCount)
	}
}

// Insight changes in one batch: each insight is read once and written once, with a
// history point per change; a refused change (non-numeric, unknown project) writes
// nothing and does not fail its neighbours; a delete in the same batch sees the
// changes before it.
func TestInsightChangesInABatch(t *testing.T) {
	t.Parallel()
	db, a := openShop(t)
	ctx := t.Context()
	if _, err := db.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "shop", Title: "Status", Value: "ok", Change: "update"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		c    tidings.InsightChange
		want string
	}{
		{tidings.InsightChange{Project: "shop", Title: "Signups", Value: "1", Change: "increment"}, ""},
		{tidings.InsightChange{Project: "shop", Title: "Status", Value: "1", Change: "increment"}, tidings.EInsightNotNumeric},
		{tidings.InsightChange{Project: "nope", Title: "Signups", Value: "1", Change: "increment"}, tidings.EProjectNotFound},
		{tidings.InsightChange{Project: "shop", Title: "Revenue", Value: "2.50", Change: "increment"}, ""},
	}
	const rounds = 50
	var wg sync.WaitGroup
	errs := make([]error, len(cases)*rounds)
	values := make([]string, len(errs))
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cases[i%len(cases)].c
			in, err := db.ApplyInsight(ctx, a.ID, &c)
			errs[i] = err
			if in != nil {
				values[i] = in.Value
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, err := range errs {
		if want := cases[i%len(cases)].want; tidings.ErrorCode(err) != want {
			t.Fatalf("case %d: %v, want %q", i%len(cases), err, want)
		}
		if i%len(cases) == 0 {
			if seen[values[i]] {
				t.Fatalf("two increments answered the same value %s", values[i])
			}
			seen[values[i]] = true
		}
	}
	list, err := db.ListInsights(ctx, a.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, in := range list {
		got[in.Title] = in.Value
	}
	if got["Signups"] != "50" || got["Revenue"] != "125.00" || got["Status"] != "ok" {
		t.Fatalf("insights after the batch: %v", got)
	}
	hist, err := db.InsightHistory(ctx, a.ID, "shop", "Signups", 1000)
	if err != nil || len(hist) != rounds || hist[len(hist)-1].Value != "50" {
		t.Fatalf("history: %d points (%v), last %+v", len(hist), err, hist[len(hist)-1])
	}

	// A delete and changes around it, submitted together.
	var wg2 sync.WaitGroup
	var delErr error
	for i := 0; i < 20; i++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			if i == 10 {
				delErr = db.DeleteInsight(ctx, a.ID, "shop", "Signups")
				return
			}
			db.ApplyInsight(ctx, a.ID, &tidings.InsightChange{Project: "shop", Title: "Signups", Value: "1", Change: "increment"})
		}()
	}
	wg2.Wait()
	if delErr != nil {
		t.Fatal(delErr)
	}
	var n, points int
	db.read.QueryRow(`SELECT CAST(value AS INTEGER) FROM insights WHERE title = 'Signups'`).Scan(&n)
	db.read.QueryRow(`SELECT count(*) FROM insight_points p JOIN insights i ON i.id = p.insight_id WHERE i.title = 'Signups'`).Scan(&points)
	if n != points {
		t.Fatalf("after a delete among increments: value %d but %d history points", n, points)
	}
}

// openShop opens a store in a temporary folder with account acme and its project shop.
func openShop(t *testing.T) (*DB, *tidings.Account) {
	t.Helper()
	db, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a, err := db.CreateAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateProject(t.Context(), a.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	return db, a
}
