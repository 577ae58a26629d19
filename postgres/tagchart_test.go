package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
)

// tagHourKey is a value's hour, as the feed and CountTagHours count them.
type tagHourKey struct {
	value string
	hour  time.Time
}

// feedTagHours counts the feed's events with tag key (and value) per value and hour.
func feedTagHours(t *testing.T, db *postgres.DB, accountID int64, key string, values []string, from, to time.Time) map[tagHourKey]int64 {
	t.Helper()
	out := map[tagHourKey]int64{}
	for _, v := range values {
		q := tidings.EventQuery{Project: "shop", Tags: []tidings.Tag{{Key: key, Value: v}}, Since: from, Until: to, Limit: 100}
		for {
			page, err := db.ListEvents(t.Context(), accountID, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Events {
				out[tagHourKey{v, e.Timestamp.UTC().Truncate(time.Hour)}]++
			}
			if page.Next == "" {
				break
			}
			q.Before = page.Next
		}
	}
	return out
}

func tagHours(t *testing.T, db *postgres.DB, accountID int64, key string, value *string, from, to time.Time, max int) map[tagHourKey]int64 {
	t.Helper()
	counts, err := db.CountTagHours(t.Context(), accountID, "shop", key, value, from, to, max)
	if err != nil {
		t.Fatal(err)
	}
	out := map[tagHourKey]int64{}
	for _, c := range counts {
		k := tagHourKey{c.Value, c.Hour}
		if _, dup := out[k]; dup || c.N <= 0 || !c.Hour.Equal(c.Hour.Truncate(time.Hour)) {
			t.Fatalf("CountTagHours gave %v twice, or not a count of a whole hour: %+v", k, c)
		}
		out[k] = c.N
	}
	return out
}

// TestTagHours lowers the roll-up threshold to 20 and follows a project's tags through
// publishes, a batch that takes plan:pro past it, deletions of every kind: at each
// step CountTagHours (one value or all of a key's) counts what the feed lists, the
// rolled tags have their hourly rows, the others none, and the check finds nothing.
func TestTagHours(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	postgres.SetTagRollup(db, 20)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })

	now := time.Now().UTC()
	// 70 hours of events, the first 22 more than 7 days old (the purge's).
	base := now.Truncate(time.Hour).Add(-7*24*time.Hour - 22*time.Hour)
	accounts := map[string]*tidings.Account{}
	for _, name := range []string{"acme", "globex"} {
		a, err := db.CreateAccount(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		accounts[name] = a
		db.CreateProject(ctx, a.ID, "shop")
		db.CreateChannel(ctx, a.ID, "shop", "orders")
		db.CreateChannel(ctx, a.ID, "shop", "refunds")
	}
	acme, globex := accounts["acme"], accounts["globex"]
	n := 0
	event := func(plan string) *tidings.NewEvent {
		n++
		return &tidings.NewEvent{Project: "shop", Channel: []string{"orders", "refunds"}[n%2], Event: "Paid", Parser: tidings.ParserText,
			Timestamp: base.Add(time.Duration(n*37%70)*time.Hour + time.Duration(n)*time.Minute),
			Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: plan},
				{Key: "seats", Kind: tidings.KindNumber, Value: fmt.Sprint(n % 3)}}}
	}
	publish := func(a *tidings.Account, events ...*tidings.NewEvent) []*tidings.Event {
		t.Helper()
		res, err := db.PublishEvents(ctx, a.ID, &tidings.NewBatch{Events: events})
		if err != nil {
			t.Fatal(err)
		}
		var out []*tidings.Event
		for _, p := range res {
			if p.Err != nil {
				t.Fatal(p.Err)
			}
			out = append(out, p.Event)
		}
		return out
	}
	// globex's plan:pro is rolled at once and never counted as acme's.
	var batch []*tidings.NewEvent
	for range 40 {
		batch = append(batch, event("pro"))
	}
	publish(globex, batch...)
	var pro []*tidings.Event
	for range 15 {
		pro = append(pro, publish(acme, event("pro"))...)
	}
	for range 5 {
		publish(acme, event("free"))
	}

	plans := []string{"pro", "free", "team"}
	from, to := base.Add(-time.Hour), now.Add(time.Hour)
	rolled := func(value string) (bool, int) {
		t.Helper()
		var rolled bool
		var rows int
		if err := conn.QueryRow(ctx, `SELECT coalesce((SELECT rolled FROM tag_counts c JOIN projects p ON p.id = c.project_id
				WHERE p.account_id = $1 AND c.key = 'plan' AND c.value = $2), false),
			(SELECT count(*) FROM tag_hours h JOIN projects p ON p.id = h.project_id WHERE p.account_id = $1 AND h.key = 'plan' AND h.value = $2)`,
			acme.ID, value).Scan(&rolled, &rows); err != nil {
			t.Fatal(err)
		}
		return rolled, rows
	}
	agree := func(step string, wantRolled ...string) {
		t.Helper()
		for _, v := range plans {
			r, rows := rolled(v)
			if r != slices.Contains(wantRolled, v) || (rows > 0) != r {
				t.Fatalf("%s: plan:%s rolled %v with %d hourly rows, want rolled %v", step, v, r, rows, slices.Contains(wantRolled, v))
			}
			want := feedTagHours(t, db, acme.ID, "plan", []string{v}, from, to)
			if got := tagHours(t, db, acme.ID, "plan", &v, from, to, 1000); !maps.Equal(got, want) {
				t.Fatalf("%s: plan:%s per hour\n got %v\nwant %v", step, v, got, want)
			}
		}
		want := feedTagHours(t, db, acme.ID, "plan", plans, from, to)
		if got := tagHours(t, db, acme.ID, "plan", nil, from, to, 1000); !maps.Equal(got, want) {
			t.Fatalf("%s: every plan per hour\n got %v\nwant %v", step, got, want)
		}
		// A range of a few hours, its ends inside hours: the hours that start in it.
		f, u := base.Add(10*time.Hour+time.Minute), base.Add(30*time.Hour+time.Minute)
		want = feedTagHours(t, db, acme.ID, "plan", plans, f.Truncate(time.Hour).Add(time.Hour), u.Truncate(time.Hour).Add(time.Hour))
		if got := tagHours(t, db, acme.ID, "plan", nil, f, u, 1000); !maps.Equal(got, want) {
			t.Fatalf("%s: every plan per hour from %s to %s\n got %v\nwant %v", step, f, u, got, want)
		}
		r, err := db.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK() {
			t.Fatalf("%s: check: %v", step, r.Problems)
		}
	}
	agree("below the threshold")

	// A batch takes plan:pro from 15 to 25: it fills its rows, its own events included.
	batch = nil
	for range 10 {
		batch = append(batch, event("pro"))
	}
	batch = append(batch, event("team"))
	pro = append(pro, publish(acme, batch...)...)
	agree("a batch past the threshold", "pro")
	for range 5 {
		pro = append(pro, publish(acme, event("pro"), event("free"))[0])
	}
	agree("more publishes", "pro")

	if err := db.DeleteEvent(ctx, acme.ID, "shop", pro[3].ID); err != nil {
		t.Fatal(err)
	}
	agree("DeleteEvent", "pro")

	// The purge takes the events older than 7 days: the first 22 hours'.
	if err := db.SetRetention(ctx, acme.ID, "shop", 7); err != nil {
		t.Fatal(err)
	}
	if purged, err := db.PurgeExpired(ctx, now, 1000); err != nil || purged == 0 {
		t.Fatalf("purged %d: %v", purged, err)
	}
	agree("PurgeExpired", "pro")

	if err := db.DeleteChannel(ctx, acme.ID, "shop", "refunds"); err != nil {
		t.Fatal(err)
	}
	// plan:pro is below the threshold now, and stays rolled.
	agree("DeleteChannel", "pro")
	var left int64
	conn.QueryRow(ctx, `SELECT c.n FROM tag_counts c JOIN projects p ON p.id = c.project_id WHERE p.account_id = $1 AND key = 'plan' AND value = 'pro'`, acme.ID).Scan(&left)
	if left >= 20 {
		t.Fatalf("plan:pro has %d events after the deletions, meant to be fewer than the threshold", left)
	}

	// Every event of a rolled tag deleted: no row is left, nor a count.
	page, err := db.ListEvents(ctx, acme.ID, tidings.EventQuery{Project: "shop", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Events {
		if err := db.DeleteEvent(ctx, acme.ID, "shop", e.ID); err != nil {
			t.Fatal(err)
		}
	}
	if r, rows := rolled("pro"); r || rows != 0 {
		t.Fatalf("plan:pro without events: rolled %v, %d hourly rows", r, rows)
	}
	agree("every plan:pro deleted")

	// globex's counts are its own.
	v := "pro"
	if got, want := tagHours(t, db, globex.ID, "plan", &v, from, to, 1000), feedTagHours(t, db, globex.ID, "plan", []string{v}, from, to); !maps.Equal(got, want) {
		t.Fatalf("globex's plan:pro\n got %v\nwant %v", got, want)
	}
}

// TestTagHoursBudget: the events of the values that are not rolled count against max,
// before any is read; a rolled value's rows do not.
func TestTagHoursBudget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := open(t)
	postgres.SetTagRollup(db, 20)
	a, _ := db.CreateAccount(ctx, "acme")
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateChannel(ctx, a.ID, "shop", "orders")
	var batch []*tidings.NewEvent
	for i := range 30 {
		batch = append(batch, &tidings.NewEvent{Project: "shop", Channel: "orders", Event: "Visit", Parser: tidings.ParserText,
			Tags: tidings.Tags{{Key: "visitor", Kind: tidings.KindString, Value: fmt.Sprint("v", i)},
				{Key: "plan", Kind: tidings.KindString, Value: "pro"}}})
	}
	for _, p := range must(db.PublishEvents(ctx, a.ID, &tidings.NewBatch{Events: batch})) {
		if p.Err != nil {
			t.Fatal(p.Err)
		}
	}
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if _, err := db.CountTagHours(ctx, a.ID, "shop", "visitor", nil, from, to, 29); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("30 rare values, a budget of 29: %v, want ErrScanBudget", err)
	}
	if c, err := db.CountTagHours(ctx, a.ID, "shop", "visitor", nil, from, to, 30); err != nil || len(c) != 30 {
		t.Fatalf("30 rare values, a budget of 30: %d counts, %v", len(c), err)
	}
	v := "v7"
	if c, err := db.CountTagHours(ctx, a.ID, "shop", "visitor", &v, from, to, 1); err != nil || len(c) != 1 || c[0].N != 1 {
		t.Fatalf("one rare value, a budget of 1: %v, %v", c, err)
	}
	if _, err := db.CountTagHours(ctx, a.ID, "shop", "visitor", &v, from, to, 0); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("one rare value, a budget of 0: %v, want ErrScanBudget", err)
	}
	// plan:pro's 30 events (rolled) cost nothing.
	if c, err := db.CountTagHours(ctx, a.ID, "shop", "plan", nil, from, to, 0); err != nil || len(c) != 1 || c[0].N != 30 {
		t.Fatalf("a rolled value, a budget of 0: %v, %v", c, err)
	}
	if _, err := db.CountTagHours(ctx, a.ID, "shop", "nope", nil, from, to, 0); err != nil {
		t.Fatalf("a key of no event: %v", err)
	}
	if _, err := db.CountTagHours(ctx, a.ID, "other", "plan", nil, from, to, 0); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("another project: %v, want %s", err, tidings.EProjectNotFound)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
