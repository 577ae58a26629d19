package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
)

// chartStore is a store with one project of 90 events over 15 hours, in two channels,
// of six names, three plans and four users (and none): what the feed's and the
// charts' filters select among. It returns every event of the project.
func chartStore(t *testing.T) (*DB, *tidings.Account, []*tidings.Event) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.URL(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a, _ := db.CreateAccount(ctx, "acme")
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateChannel(ctx, a.ID, "shop", "payments")
	db.CreateChannel(ctx, a.ID, "shop", "refunds")
	// Another account's project of the same name, with the same kind of events: never in
	// acme's answers.
	other, _ := db.CreateAccount(ctx, "globex")
	db.CreateProject(ctx, other.ID, "shop")
	db.CreateChannel(ctx, other.ID, "shop", "payments")
	base := time.Now().UTC().Truncate(time.Hour).Add(-16 * time.Hour)
	// "Payment" is a word of two other names; "Платёж прошёл" has words PostgreSQL's
	// parser may read otherwise than Go, so its filter is checked on the events alone.
	// "Deploy 12e4x v2" too: PostgreSQL reads its second word as two, in the events
	// and in the query.
	names := []string{"Payment failed", "Payment succeeded", "Refund issued", "Payment", "Платёж прошёл", "Deploy 12e4x v2"}
	var all []*tidings.Event
	for i := range 90 {
		ne := &tidings.NewEvent{Project: "shop", Channel: []string{"payments", "refunds"}[i%2], Event: names[i%6],
			Description: fmt.Sprintf("order %d", i), Parser: tidings.ParserText,
			Timestamp: base.Add(time.Duration(i) * 10 * time.Minute),
			UserID:    []string{"", "u1", "u2", "u3", "u4"}[i/3%5],
			Tags:      tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: []string{"free", "pro", "team"}[i/3%3]}}}
		ev, err := db.PublishEvent(ctx, a.ID, ne)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ev)
		if i%10 == 0 {
			ne.Channel = "payments"
			if _, err := db.PublishEvent(ctx, other.ID, ne); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db, a, all
}

// chartQueries are the filters the tests below ask: each search with and without a
// channel, and with a time range.
func chartQueries(t *testing.T, all []*tidings.Event) []tidings.EventQuery {
	t.Helper()
	var qs []tidings.EventQuery
	for _, s := range []string{`event:"Payment failed"`, `event:"Refund issued" plan:pro`, `event:"Payment failed" failed`,
		`event:"Payment succeeded" user:u2`, `event:"Payment failed" order`, `event:"payment failed"`, `plan:team`,
		`tag:plan:free order`, `succeeded`, `event:Payment`, `event:Payment failed`, `event:"Платёж прошёл"`,
		`event:"Платёж прошёл" plan:free`, `event:"Платёж прошёл" user:u3`, `event:"Платёж прошёл" order`, `event:"Платёж"`, `event:"Deploy 12e4x v2"`, `event:"Deploy 12e4x v2" plan:pro`, `"order 4*"`, `user:u1`, `channel:refunds event:"Refund issued"`, ``} {
		search, err := tidings.ParseSearch(s, time.Now())
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for _, channel := range []string{"", "payments"} {
			q := tidings.EventQuery{Project: "shop", Channel: channel}
			if !q.AddSearch(search) {
				continue
			}
			qs = append(qs, q)
			ranged := q
			ranged.Since, ranged.Until = all[20].Timestamp, all[61].Timestamp
			qs = append(qs, ranged)
		}
	}
	group := tidings.EventQuery{Project: "shop", Users: []string{"u3", "u1"}, Event: "Payment succeeded"}
	return append(qs, group, tidings.EventQuery{Project: "shop", Users: []string{"u4", "u2"}, Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}})
}

// feed lists every page of q's feed.
func feed(t *testing.T, db *DB, accountID int64, q tidings.EventQuery) []string {
	t.Helper()
	q.Limit = 7
	var ids []string
	for {
		p, err := db.ListEvents(context.Background(), accountID, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range p.Events {
			ids = append(ids, ev.ID)
		}
		if p.Next == "" {
			return ids
		}
		q.Before = p.Next
	}
}

// want is what q selects among all, newest first as the feed lists.
func want(q tidings.EventQuery, all []*tidings.Event) []string {
	var ids []string
	for _, ev := range slices.Backward(all) { // published oldest first, accepted in that order
		if q.Matches(ev) {
			ids = append(ids, ev.ID)
		}
	}
	return ids
}

func describe(q tidings.EventQuery) string {
	return fmt.Sprintf("channel %q event %q tags %v terms %v users %v since %v until %v",
		q.Channel, q.Event, q.Tags, q.Terms, q.Users, !q.Since.IsZero(), !q.Until.IsZero())
}

// TestEventFilterFeed: an event: filter lists exactly the events of that name on every
// path of the feed: plain, read from a tag's index, a word search from each of its
// sources, a journey.
func TestEventFilterFeed(t *testing.T) {
	db, a, all := chartStore(t)
	byName := 0
	for _, q := range chartQueries(t, all) {
		exp := want(q, all)
		if q.Event != "" && len(exp) > 0 {
			byName++
		}
		for _, candidates := range []int64{searchCandidates, -1} { // a set read whole, and the walk
			old := searchCandidates
			searchCandidates = candidates
			got := feed(t, db, a.ID, q)
			searchCandidates = old
			if !slices.Equal(got, exp) {
				t.Errorf("%s (candidates %d): the feed lists %d events, want %d", describe(q), candidates, len(got), len(exp))
			}
		}
	}
	if byName < 10 {
		t.Fatalf("only %d queries by event name select events: the test checks too little", byName)
	}
}

// TestScanEventsIsTheFeed: ScanEvents calls its function with exactly the events the
// feed lists for each query, and refuses one more than its budget.
func TestScanEventsIsTheFeed(t *testing.T) {
	db, a, all := chartStore(t)
	ctx := context.Background()
	scan := func(q tidings.EventQuery, budget int) ([]string, error) {
		var ids []string
		err := db.ScanEvents(ctx, a.ID, q, budget, func(ev *tidings.Event) error {
			if !q.Matches(ev) || ev.Project != "shop" {
				t.Errorf("%s: scanned %s (%q in %q), which the query does not select", describe(q), ev.ID, ev.Event, ev.Channel)
			}
			ids = append(ids, ev.ID)
			return nil
		})
		slices.Sort(ids)
		return ids, err
	}
	for _, q := range chartQueries(t, all) {
		exp := feed(t, db, a.ID, q)
		if w := want(q, all); !slices.Equal(exp, w) {
			t.Fatalf("%s: the feed lists %d events, want %d", describe(q), len(exp), len(w))
		}
		slices.Sort(exp)
		got, err := scan(q, len(exp))
		if err != nil || !slices.Equal(got, exp) {
			t.Errorf("%s: scanned %d events (%v), the feed lists %d", describe(q), len(got), err, len(exp))
		}
		if len(exp) > 0 {
			if _, err := scan(q, len(exp)-1); !errors.Is(err, tidings.ErrScanBudget) {
				t.Errorf("%s: %d events within a budget of %d: %v, want ErrScanBudget", describe(q), len(exp), len(exp)-1, err)
			}
		}
	}
	// fn's error stops the scan and is returned.
	stop := errors.New("stop")
	n := 0
	if err := db.ScanEvents(ctx, a.ID, tidings.EventQuery{Project: "shop"}, 1000, func(*tidings.Event) error {
		n++
		return stop
	}); !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: %v after %d calls, want stop after 1", err, n)
	}
	for _, c := range []struct {
		q    tidings.EventQuery
		code string
	}{
		{tidings.EventQuery{Project: "nope"}, tidings.EProjectNotFound},
		{tidings.EventQuery{Project: "shop", Channel: "nope"}, tidings.EChannelNotFound},
	} {
		err := db.ScanEvents(ctx, a.ID, c.q, 10, func(*tidings.Event) error { return nil })
		if tidings.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", describe(c.q), err, c.code)
		}
	}
}

// TestCountHours: the hourly counts per channel are the events' own, within [from, to),
// without empty hours, one channel's or the project's.
func TestCountHours(t *testing.T) {
	db, a, all := chartStore(t)
	ctx := context.Background()
	from := all[0].Timestamp.Add(2 * time.Hour)
	to := from.Add(10 * time.Hour)
	for _, channel := range []string{"", "refunds"} {
		exp := map[string]int64{}
		for _, ev := range all {
			if (channel == "" || ev.Channel == channel) && !ev.Timestamp.Before(from) && ev.Timestamp.Before(to) {
				exp[ev.Channel+" "+ev.Timestamp.Truncate(time.Hour).Format(time.RFC3339)]++
			}
		}
		hours, err := db.CountHours(ctx, a.ID, "shop", channel, from, to)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, h := range hours {
			if h.N <= 0 || h.Hour.Location() != time.UTC {
				t.Errorf("channel %q: a row %+v", channel, h)
			}
			got[h.Channel+" "+h.Hour.Format(time.RFC3339)] += h.N
		}
		if len(exp) < 10 || fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("channel %q: counted\n%v\nwant\n%v", channel, got, exp)
		}
	}
	if _, err := db.CountHours(ctx, a.ID, "shop", "nope", from, to); tidings.ErrorCode(err) != tidings.EChannelNotFound {
		t.Errorf("an unknown channel: %v", err)
	}
	if _, err := db.CountHours(ctx, a.ID, "nope", "", from, to); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Errorf("an unknown project: %v", err)
	}
}
