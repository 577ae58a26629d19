package sqlite

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// chartStore is account acme's project shop with 300 events in channels orders and
// signups, of a few names (one a word of another, one without words), plan and
// country tags, users, a word in some descriptions, over 50 hours. It returns them as
// published.
func chartStore(t *testing.T) (*DB, int64, []*tidings.Event, time.Time) {
	t.Helper()
	db, a := openShop(t)
	names := []string{"Order placed", "Order", "Signed up", "Order placed", "++"}
	base := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	var batch []*tidings.NewEvent
	for i := range 300 {
		e := &tidings.NewEvent{Project: "shop", Channel: "orders", Event: names[i%len(names)], Parser: tidings.ParserText,
			Timestamp: base.Add(-time.Duration(i) * 10 * time.Minute),
			Tags:      tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: []string{"pro", "free"}[i%2]}}}
		if i%3 == 0 {
			e.Channel = "signups"
		}
		if i%5 == 0 {
			e.Tags = append(e.Tags, tidings.Tag{Key: "country", Kind: tidings.KindString, Value: "fr"})
		}
		if i%10 == 0 {
			e.Description = "a big one"
		}
		if i%4 != 0 {
			e.UserID = fmt.Sprintf("u%d", i%7)
		}
		batch = append(batch, e)
	}
	for _, c := range []string{"orders", "signups"} {
		if _, err := db.CreateChannel(t.Context(), a.ID, "shop", c); err != nil {
			t.Fatal(err)
		}
	}
	res, err := db.PublishEvents(t.Context(), a.ID, &tidings.NewBatch{Events: batch})
	if err != nil {
		t.Fatal(err)
	}
	var evs []*tidings.Event
	for i, r := range res {
		if r.Event == nil {
			t.Fatalf("event %d refused: %v", i, r.Err)
		}
		evs = append(evs, r.Event)
	}
	return db, a.ID, evs, base
}

// matching is the IDs of the events q matches, by EventQuery.Matches.
func matching(evs []*tidings.Event, q tidings.EventQuery) map[string]bool {
	out := map[string]bool{}
	for _, ev := range evs {
		if q.Matches(ev) {
			out[ev.ID] = true
		}
	}
	return out
}

// feedIDs lists q's events page by page through ListEvents.
func feedIDs(t *testing.T, db *DB, accountID int64, q tidings.EventQuery) map[string]bool {
	t.Helper()
	q.Limit = 7
	out := map[string]bool{}
	var last time.Time
	for {
		p, err := db.ListEvents(t.Context(), accountID, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range p.Events {
			if out[ev.ID] {
				t.Fatalf("event %s listed twice", ev.ID)
			}
			if !last.IsZero() && ev.Timestamp.After(last) {
				t.Fatalf("feed out of order at %s", ev.ID)
			}
			last = ev.Timestamp
			out[ev.ID] = true
		}
		if p.Next == "" {
			return out
		}
		q.Before = p.Next
	}
}

// scanIDs collects what ScanEvents hands out, checking each against q.
func scanIDs(t *testing.T, db *DB, accountID int64, q tidings.EventQuery, max int) (map[string]bool, error) {
	t.Helper()
	out := map[string]bool{}
	err := db.ScanEvents(t.Context(), accountID, q, max, func(ev *tidings.Event) error {
		if !q.Matches(ev) {
			t.Errorf("scan of %+v handed out %s (%s in %s), which it does not match", q, ev.ID, ev.Event, ev.Channel)
		}
		if out[ev.ID] {
			t.Errorf("scan handed out %s twice", ev.ID)
		}
		out[ev.ID] = true
		return nil
	})
	return out, err
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// chartQueries are filters over chartStore's events, each with its field filters.
func chartQueries(base time.Time) map[string]tidings.EventQuery {
	pro := tidings.Tag{Key: "plan", Value: "pro"}
	fr := tidings.Tag{Key: "country", Value: "fr"}
	big := []tidings.Term{{Words: []string{"big"}}}
	return map[string]tidings.EventQuery{
		"all":                 {},
		"channel":             {Channel: "signups"},
		"event":               {Event: "Order placed"},
		"event word of other": {Event: "Order"},
		"event without words": {Event: "++"},
		"event unknown":       {Event: "Nothing"},
		"event case":          {Event: "order placed"},
		"event channel":       {Event: "Order placed", Channel: "signups"},
		"event tag":           {Event: "Order", Tags: []tidings.Tag{pro}},
		"event tags":          {Event: "Order placed", Tags: []tidings.Tag{pro, fr}},
		"event words":         {Event: "Order placed", Terms: big},
		"event words channel": {Event: "Order placed", Terms: big, Channel: "orders"},
		"tags":                {Tags: []tidings.Tag{pro, fr}},
		"unknown tag":         {Tags: []tidings.Tag{{Key: "plan", Value: "none"}}},
		"words":               {Terms: big},
		"prefix":              {Terms: []tidings.Term{{Words: []string{"plac"}, Prefix: true}}},
		"user":                {Users: []string{"u3"}},
		"users event":         {Users: []string{"u3", "u5"}, Event: "Order placed"},
		"range":               {Since: base.Add(-20 * time.Hour), Until: base.Add(-10 * time.Hour)},
		"range event":         {Since: base.Add(-20 * time.Hour), Until: base.Add(-10 * time.Hour), Event: "Signed up"},
		"range event channel": {Since: base.Add(-30 * time.Hour), Event: "Order", Channel: "orders"},
		"until":               {Until: base.Add(-40 * time.Hour), Tags: []tidings.Tag{fr}},
	}
}

// The feed lists exactly the events of an event: filter's name (case-sensitive, not a
// word of it), alone or with words, tags, a channel, users and a time range.
func TestEventFilterInFeed(t *testing.T) {
	db, accountID, evs, base := chartStore(t)
	for name, q := range chartQueries(base) {
		q.Project = "shop"
		want := matching(evs, q)
		got := feedIDs(t, db, accountID, q)
		if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
			t.Errorf("%s: the feed lists %d events, want %d", name, len(got), len(want))
		}
	}
	// As a search: event:"Order placed" is not event:"Order".
	s, err := tidings.ParseSearch(`event:"Order" plan:pro`, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	q := tidings.EventQuery{Project: "shop"}
	q.AddSearch(s)
	got := feedIDs(t, db, accountID, q)
	for id := range got {
		for _, ev := range evs {
			if ev.ID == id && ev.Event != "Order" {
				t.Fatalf("event:\"Order\" lists %q", ev.Event)
			}
		}
	}
	if want := matching(evs, q); len(got) != len(want) || len(want) == 0 {
		t.Fatalf("event:\"Order\" plan:pro lists %d events, want %d", len(got), len(want))
	}
}

// ScanEvents hands out exactly what the feed lists, for every filter.
func TestScanEventsIsTheFeed(t *testing.T) {
	db, accountID, evs, base := chartStore(t)
	for name, q := range chartQueries(base) {
		q.Project = "shop"
		got, err := scanIDs(t, db, accountID, q, len(evs))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := feedIDs(t, db, accountID, q)
		if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
			t.Errorf("%s: the scan hands out %d events, the feed lists %d", name, len(got), len(want))
		}
		if m := matching(evs, q); len(m) != len(got) {
			t.Errorf("%s: the scan hands out %d events, %d match", name, len(got), len(m))
		}
	}
}

// A scan that would read more than its budget says so; one whose filter the
// full-text index narrows reads only its candidates.
func TestScanEventsBudget(t *testing.T) {
	db, accountID, evs, _ := chartStore(t)
	ctx := t.Context()
	all := tidings.EventQuery{Project: "shop"}
	if _, err := scanIDs(t, db, accountID, all, len(evs)-1); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("scan of %d events with a budget of %d: %v", len(evs), len(evs)-1, err)
	}
	if got, err := scanIDs(t, db, accountID, all, len(evs)); err != nil || len(got) != len(evs) {
		t.Fatalf("scan with a budget of every event: %d events, %v", len(got), err)
	}
	if _, err := scanIDs(t, db, accountID, tidings.EventQuery{Project: "shop", Channel: "signups"}, 99); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("scan of 100 signups with a budget of 99: %v", err)
	}
	// "Order placed" is 120 events, whose words no other event holds: a budget of 120
	// reads them from the full-text index.
	placed := tidings.EventQuery{Project: "shop", Event: "Order placed"}
	if got, err := scanIDs(t, db, accountID, placed, 120); err != nil || len(got) != 120 {
		t.Fatalf("scan of Order placed with a budget of 120: %d events, %v", len(got), err)
	}
	// "Order" is a word of 180 events: more than the budget, and so is the time range.
	if _, err := scanIDs(t, db, accountID, tidings.EventQuery{Project: "shop", Event: "Order"}, 120); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("scan of Order with a budget of 120: %v", err)
	}
	// fn's error ends the scan.
	stop := errors.New("stop")
	if err := db.ScanEvents(ctx, accountID, all, 1000, func(*tidings.Event) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("fn's error: %v", err)
	}
	for _, c := range []struct {
		q    tidings.EventQuery
		code string
	}{
		{tidings.EventQuery{Project: "nope"}, tidings.EProjectNotFound},
		{tidings.EventQuery{Project: "shop", Channel: "nope"}, tidings.EChannelNotFound},
	} {
		err := db.ScanEvents(ctx, accountID, c.q, 1000, func(*tidings.Event) error { return nil })
		if got := tidings.ErrorCode(err); got != c.code {
			t.Fatalf("scan of %+v: %v, want %s", c.q, err, c.code)
		}
		if got := tidings.ErrorCode(db.ScanEvents(ctx, accountID+1, tidings.EventQuery{Project: "shop"}, 1000,
			func(*tidings.Event) error { return nil })); got != tidings.EProjectNotFound {
			t.Fatalf("another account's scan: %s", got)
		}
	}
}

// CountHours gives each channel's events per hour of [from, to), none for an empty hour.
func TestCountHours(t *testing.T) {
	db, accountID, evs, base := chartStore(t)
	from, to := base.Add(-30*time.Hour), base.Add(-5*time.Hour)
	for _, channel := range []string{"", "orders", "signups"} {
		want := map[string]int64{}
		for _, ev := range evs {
			if (channel == "" || ev.Channel == channel) && !ev.Timestamp.Before(from) && ev.Timestamp.Before(to) {
				want[ev.Channel+" "+ev.Timestamp.Truncate(time.Hour).Format(time.RFC3339)]++
			}
		}
		counts, err := db.CountHours(t.Context(), accountID, "shop", channel, from, to)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, c := range counts {
			if c.N == 0 || c.Hour.Location() != time.UTC {
				t.Fatalf("count %+v", c)
			}
			got[c.Channel+" "+c.Hour.Format(time.RFC3339)] += c.N
		}
		if !maps.Equal(got, want) {
			t.Fatalf("channel %q: counts %v, want %v", channel, got, want)
		}
	}
	if _, err := db.CountHours(t.Context(), accountID, "shop", "nope", from, to); tidings.ErrorCode(err) != tidings.EChannelNotFound {
		t.Fatalf("unknown channel: %v", err)
	}
	if _, err := db.CountHours(t.Context(), accountID+1, "shop", "", from, to); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("another account: %v", err)
	}
	counts, err := db.CountHours(t.Context(), accountID, "shop", "", base.Add(24*time.Hour), base.Add(25*time.Hour))
	if err != nil || counts == nil || len(counts) != 0 {
		t.Fatalf("an empty range: %v, %v", counts, err)
	}
}
