package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

func (f fixture) insight(t *testing.T, c tidings.InsightChange) (*tidings.Insight, error) {
	t.Helper()
	if c.Project == "" {
		c.Project = "my-saas"
	}
	if c.ValueKind == "" {
		c.ValueKind = tidings.KindNumber
	}
	var p tidings.Problems
	c.Check(&p)
	if err := p.Err(); err != nil {
		t.Fatalf("bad change in test: %v", err)
	}
	return f.s.ApplyInsight(context.Background(), f.account.ID, &c)
}

func str(s string) *string { return &s }

func testInsights(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	steps := []struct {
		change tidings.InsightChange
		want   tidings.Insight
	}{
		{tidings.InsightChange{Title: "Revenue", Value: "0.1", Change: "increment", Prefix: str("$"), Icon: str("💰")},
			tidings.Insight{Value: "0.1", Prefix: "$", Icon: "💰"}},
		{tidings.InsightChange{Title: "Revenue", Value: "0.2", Change: "increment"},
			tidings.Insight{Value: "0.3", Prefix: "$", Icon: "💰"}},
		{tidings.InsightChange{Title: "Revenue", Value: "19.99", Change: "update", Suffix: str(" USD")},
			tidings.Insight{Value: "19.99", Prefix: "$", Suffix: " USD", Icon: "💰"}},
		{tidings.InsightChange{Title: "Revenue", Value: "0.01", Change: "increment"},
			tidings.Insight{Value: "20.00", Prefix: "$", Suffix: " USD", Icon: "💰"}},
		{tidings.InsightChange{Title: "Revenue", Value: "25", Change: "decrement", Icon: str("")},
			tidings.Insight{Value: "-5.00", Prefix: "$", Suffix: " USD"}},
		{tidings.InsightChange{Title: "Status", Value: "Operational", ValueKind: tidings.KindString, Change: "update", Icon: str("🟢")},
			tidings.Insight{Value: "Operational", Icon: "🟢"}},
		{tidings.InsightChange{Title: "Status", Value: "Outage", ValueKind: tidings.KindString, Change: "update", Icon: str("🔴")},
			tidings.Insight{Value: "Outage", Icon: "🔴"}},
	}
	for i, s := range steps {
		got, err := f.insight(t, s.change)
		must(t, err)
		if got.Value != s.want.Value || got.Prefix != s.want.Prefix || got.Suffix != s.want.Suffix ||
			got.Icon != s.want.Icon || got.Change != s.change.Change || got.Title != s.change.Title {
			t.Fatalf("step %d: got %+v, want %+v", i, got, s.want)
		}
	}
	_, err := f.insight(t, tidings.InsightChange{Title: "Status", Value: "1", Change: "increment"})
	wantCode(t, err, tidings.EInsightNotNumeric)
	_, err = f.insight(t, tidings.InsightChange{Project: "nope", Title: "x", Value: "1", Change: "update"})
	wantCode(t, err, tidings.EProjectNotFound)

	list, err := f.s.ListInsights(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(list) != 2 || list[0].Title != "Revenue" || list[1].Title != "Status" || list[1].Value != "Outage" {
		t.Fatalf("ListInsights = %+v", list)
	}
	hist, err := f.s.InsightHistory(ctx, f.account.ID, "my-saas", "Revenue", 100)
	must(t, err)
	var vals []string
	for _, p := range hist {
		vals = append(vals, p.Value)
	}
	if len(vals) != 5 || vals[0] != "0.1" || vals[4] != "-5.00" {
		t.Fatalf("history = %v", vals)
	}
	hist, err = f.s.InsightHistory(ctx, f.account.ID, "my-saas", "Revenue", 2)
	must(t, err)
	if len(hist) != 2 || hist[0].Value != "20.00" || hist[1].Value != "-5.00" {
		t.Fatalf("last two points = %+v", hist)
	}
	_, err = f.s.InsightHistory(ctx, f.account.ID, "my-saas", "revenue", 2) // titles are case-sensitive
	wantCode(t, err, tidings.ENotFound)
}

func testConcurrentIncrements(t *testing.T, open Opener) {
	f := setup(t, open)
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.insight(t, tidings.InsightChange{Title: "Signups", Value: "1", Change: "increment"})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list, err := f.s.ListInsights(context.Background(), f.account.ID, "my-saas")
	must(t, err)
	if len(list) != 1 || list[0].Value != "1000" {
		t.Fatalf("after %d parallel increments: %+v", n, list)
	}
}
