package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

// testInsightPages: paging through a project's insights, by title or by creation,
// returns each exactly once, in order, with pages no longer than asked.
func testInsightPages(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	const n = 250
	var titles []string
	var wg sync.WaitGroup
	for i := range n {
		// Capitals, accents and digits: titles compare by bytes on every store.
		title := fmt.Sprintf("%s insight %03d", []string{"Zeta", "alpha", "Été", "10", "Alpha"}[i%5], i)
		titles = append(titles, title)
		wg.Go(func() {
			_, err := f.s.ApplyInsight(ctx, f.account.ID, &tidings.InsightChange{Project: "my-saas", Title: title, Value: "1",
				ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.Sort(titles)
	for _, byCreation := range []bool{false, true} {
		t.Run(fmt.Sprintf("byCreation=%t", byCreation), func(t *testing.T) {
			var got []*tidings.Insight
			q := tidings.InsightQuery{Project: "my-saas", ByCreation: byCreation, Limit: 100}
			for pages := 0; ; pages++ {
				if pages > n/q.Limit+1 {
					t.Fatal("paging does not end")
				}
				page, err := f.s.PageInsights(ctx, f.account.ID, q)
				must(t, err)
				if len(page.Insights) > q.Limit || (page.Next != "" && len(page.Insights) != q.Limit) {
					t.Fatalf("page of %d insights with next %q (limit %d)", len(page.Insights), page.Next, q.Limit)
				}
				got = append(got, page.Insights...)
				if page.Next == "" {
					break
				}
				q.After = page.Next
			}
			var seen []string
			for i, in := range got {
				seen = append(seen, in.Title)
				if i > 0 && byCreation && in.Created <= got[i-1].Created {
					t.Fatalf("not in creation order at %d: %d after %d", i, in.Created, got[i-1].Created)
				}
				if in.Project != "my-saas" || in.Value != "1" {
					t.Fatalf("insight %+v", in)
				}
			}
			if !byCreation && !slices.Equal(seen, titles) {
				t.Fatalf("by title, got %d insights:\n%s", len(seen), strings.Join(seen, "\n"))
			}
			slices.Sort(seen)
			if !slices.Equal(seen, titles) {
				t.Fatalf("got %d insights, want each of %d once", len(seen), n)
			}
		})
	}
	// The last page of an exact multiple has no next.
	page, err := f.s.PageInsights(ctx, f.account.ID, tidings.InsightQuery{Project: "my-saas", After: titles[n-51], Limit: 50})
	must(t, err)
	if len(page.Insights) != 50 || page.Next != "" {
		t.Fatalf("last page: %d insights, next %q", len(page.Insights), page.Next)
	}
	_, err = f.s.PageInsights(ctx, f.account.ID, tidings.InsightQuery{Project: "my-saas", ByCreation: true, After: "x", Limit: 10})
	wantCode(t, err, tidings.EValidation)
	_, err = f.s.PageInsights(ctx, f.account.ID, tidings.InsightQuery{Project: "nope", Limit: 10})
	wantCode(t, err, tidings.EProjectNotFound)
	empty, err := f.s.PageInsights(ctx, newAccount(t, f.s, "other").ID, tidings.InsightQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	if empty.Insights == nil || len(empty.Insights) != 0 || empty.Next != "" {
		t.Fatalf("another account's page: %+v", empty)
	}
}
