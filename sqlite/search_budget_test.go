package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// TestSearchBudget: one page of a search reads at most searchBudget events, whatever
// its words and range (the audit: 8 common prefixes and before:2001-01-01 walked every
// match). A page that the budget ends is answered with what was found and a cursor,
// and following the cursors finds every match; a time range that holds few events is
// read from the time index alone.
func TestSearchBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateProject(ctx, a.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateChannel(ctx, a.ID, "shop", "orders"); err != nil {
		t.Fatal(err)
	}
	publish := func(name string, ts time.Time) {
		if _, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: name,
			Description: "customer order", Parser: tidings.ParserText, Timestamp: ts}); err != nil {
			t.Error(err)
		}
	}
	// The one event with both words comes first, then 3 budgets' worth with one each.
	publish("Paid and signed", time.Now().Add(-time.Hour))
	var wg sync.WaitGroup
	const publishers = 48 // in flight at once: the group commit writes them in large batches
	for w := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 * searchBudget / publishers {
				publish(fmt.Sprintf("%s %d %d", []string{"Paid", "Signed"}[i%2], w, i), time.Now())
			}
		}()
	}
	wg.Wait()
	// Sent last with the oldest timestamp: a search lists it last, as the feed does.
	publish("Signed 7 backdated", time.Now().Add(-2*time.Hour))

	page := func(q, before string) *tidings.EventPage {
		t.Helper()
		s, err := tidings.ParseSearch(q, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		eq := tidings.EventQuery{Project: "shop", Limit: 50, Before: before}
		eq.AddSearch(s)
		p, err := db.ListEvents(ctx, a.ID, eq)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Common words that never meet: the first page is cut by the budget, empty, with a
	// cursor; the cursors lead to the match.
	p := page("paid signed", "")
	if len(p.Events) != 0 || p.Next == "" {
		t.Fatalf("first page of a rare pair of common words: %d events, next %q", len(p.Events), p.Next)
	}
	found, pages := 0, 1
	for p.Next != "" && pages < 10 {
		p = page("paid signed", p.Next)
		found += len(p.Events)
		pages++
	}
	if found != 1 || p.Next != "" {
		t.Fatalf("following the cursors found %d events in %d pages (next %q), want the 1", found, pages, p.Next)
	}
	// Common prefixes: checked on the events read, a full page at once.
	if p := page("cust* ord*", ""); len(p.Events) != 50 || p.Next == "" {
		t.Fatalf("common prefixes: %d events, next %q", len(p.Events), p.Next)
	}
	// A range before every event reads nothing: no page, no cursor.
	for _, q := range []string{"cust* ord* before:2001-01-01", "paid before:0001-01-01", "paid after:2999-01-01"} {
		if p := page(q, ""); len(p.Events) != 0 || p.Next != "" {
			t.Fatalf("%s: %d events, next %q", q, len(p.Events), p.Next)
		}
	}
	// Every page, from the full-text index's candidates ("signed 7": 174 events carry the
	// word 7, within the budget) or from the walk of the time index ("paid": thousands),
	// lists as the feed does: the feed's events that match, in its order.
	var feed []*tidings.Event
	for eq := (tidings.EventQuery{Project: "shop", Limit: 100}); ; {
		p, err := db.ListEvents(ctx, a.ID, eq)
		if err != nil {
			t.Fatal(err)
		}
		feed = append(feed, p.Events...)
		if eq.Before = p.Next; p.Next == "" {
			break
		}
	}
	for _, q := range []string{"signed 7", "paid"} {
		s, err := tidings.ParseSearch(q, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var match tidings.EventQuery
		match.AddSearch(s)
		var want, got []string
		for _, ev := range feed {
			if match.Matches(ev) {
				want = append(want, ev.ID)
			}
		}
		for eq := (tidings.EventQuery{Project: "shop", Limit: 100}); ; {
			eq.AddSearch(s)
			p, err := db.ListEvents(ctx, a.ID, eq)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range p.Events {
				got = append(got, ev.ID)
			}
			eq = tidings.EventQuery{Project: "shop", Limit: 100, Before: p.Next}
			if p.Next == "" || len(got) > len(feed) {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d events, not the feed's %d matches in its order", q, len(got), len(want))
		}
	}
	// A range of few events is read whole: the backdated one is found at once.
	if p := page("paid before:"+time.Now().Add(-30*time.Minute).UTC().Format(time.RFC3339), ""); len(p.Events) != 1 || p.Next != "" {
		t.Fatalf("a range of one event: %d events, next %q", len(p.Events), p.Next)
	}
}
