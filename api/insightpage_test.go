package api_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/tidings-dev/tidings"
)

type insightPage struct {
	Insights []insightOut
	Next     *string
}

// TestInsightsPaged: GET /v1/insights answers at most limit insights (100 by default)
// with the cursor of the next page; walking the pages gives each insight once.
func TestInsightsPaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	const n = 230
	fill(t, n, func(i int) error {
		_, err := e.store.ApplyInsight(context.Background(), e.acme.ID, &tidings.InsightChange{Project: "my-saas",
			Title: fmt.Sprintf("Insight %03d", i), Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
		return err
	})
	for _, c := range []struct {
		limit string
		sizes []int
	}{{"", []int{100, 100, 30}}, {"&limit=77", []int{77, 77, 76}}, {"&limit=100", []int{100, 100, 30}}, {"&limit=1", nil}} {
		t.Run("limit"+c.limit, func(t *testing.T) {
			e := e.in(t)
			seen := map[string]bool{}
			var sizes []int
			after := ""
			for page := 0; page < n+1; page++ {
				q := "/v1/insights?project=my-saas" + c.limit
				if page > 0 {
					q += "&after=" + url.QueryEscape(after)
				}
				r := e.do("GET", q, e.full, "")
				if r.status != 200 {
					t.Fatalf("%s: %d %s", q, r.status, r.body)
				}
				got := decode[insightPage](t, r)
				sizes = append(sizes, len(got.Insights))
				for _, in := range got.Insights {
					if seen[in.Title] {
						t.Fatalf("%q on two pages", in.Title)
					}
					seen[in.Title] = true
				}
				if got.Next == nil {
					break
				}
				after = *got.Next
			}
			if len(seen) != n {
				t.Fatalf("%d insights seen, want %d", len(seen), n)
			}
			if c.sizes != nil && fmt.Sprint(sizes) != fmt.Sprint(c.sizes) {
				t.Fatalf("pages of %v, want %v", sizes, c.sizes)
			}
		})
	}
	for _, bad := range []string{"0", "101", "x"} {
		r := e.do("GET", "/v1/insights?project=my-saas&limit="+bad, e.full, "")
		if r.status != 400 || !r.has("limit", "range") {
			t.Fatalf("limit=%s: %d %s", bad, r.status, r.body)
		}
	}
}
