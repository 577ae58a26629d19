package sqlite

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// testRollup is the threshold the tests of the hourly tag counts lower TagRollup to.
const testRollup = 20

// rollupStore is a store whose tags roll at testRollup events, with two accounts that
// each have a project "shop" of channels "orders" and "deploys".
func rollupStore(t *testing.T) (*DB, []*tidings.Account) {
	t.Helper()
	ctx := t.Context()
	db, err := Open(ctx, t.TempDir(), Options{TagRollup: testRollup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var accounts []*tidings.Account
	for _, name := range []string{"acme", "umbrella"} {
		a, err := db.CreateAccount(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateProject(ctx, a.ID, "shop"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"orders", "deploys"} {
			if _, err := db.CreateChannel(ctx, a.ID, "shop", c); err != nil {
				t.Fatal(err)
			}
		}
		accounts = append(accounts, a)
	}
	return db, accounts
}

// tagEvent is an event of channel (orders or deploys) at ts with the tags given as
// key:value.
func tagEvent(channel string, ts time.Time, tags ...string) *tidings.NewEvent {
	e := &tidings.NewEvent{Project: "shop", Channel: channel, Event: "paid", Parser: tidings.ParserText, Timestamp: ts}
	for _, kv := range tags {
		k, v, _ := strings.Cut(kv, ":")
		e.Tags = append(e.Tags, tidings.Tag{Key: k, Kind: tidings.KindString, Value: v})
	}
	return e
}

func publishAll(t *testing.T, db *DB, account int64, events ...*tidings.NewEvent) {
	t.Helper()
	out, err := db.PublishEvents(t.Context(), account, &tidings.NewBatch{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out {
		if p.Err != nil {
			t.Fatal(p.Err)
		}
	}
}

func rolled(t *testing.T, db *DB, account int64, key, value string) (bool, int) {
	t.Helper()
	var r bool
	var rows int
	err := db.read.QueryRow(`SELECT g.rolled, (SELECT count(*) FROM tag_hours h WHERE h.tag_id = g.id) FROM tags g
		JOIN projects p ON p.id = g.project_id WHERE p.account_id = ? AND g.key = ? AND g.value = ?`, account, key, value).Scan(&r, &rows)
	if err != nil {
		t.Fatalf("tag %s:%s: %v", key, value, err)
	}
	return r, rows
}

// feedHours counts the events the feed lists with tag key:value per UTC hour (in unix
// ms), for the hours that begin in [from, to).
func feedHours(t *testing.T, db *DB, account int64, key, value string, from, to time.Time) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	q := tidings.EventQuery{Project: "shop", Tags: []tidings.Tag{{Key: key, Kind: tidings.KindString, Value: value}},
		Since: time.UnixMilli(hourBound(ms(from))), Until: time.UnixMilli(hourBound(ms(to))), Limit: 100}
	for {
		page, err := db.ListEvents(t.Context(), account, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			out[hourOf(ms(e.Timestamp))]++
		}
		if page.Next == "" {
			return out
		}
		q.Before = page.Next
	}
}

// sameAsFeed checks CountTagHours against the feed for each of values of key, one by
// one and all at once.
func sameAsFeed(t *testing.T, db *DB, account int64, key string, values []string, from, to time.Time) {
	t.Helper()
	want := map[string]map[int64]int64{}
	for _, v := range values {
		want[v] = feedHours(t, db, account, key, v, from, to)
		got, err := db.CountTagHours(t.Context(), account, "shop", key, &v, from, to, 1000)
		if err != nil {
			t.Fatalf("%s:%s: %v", key, v, err)
		}
		if h := byValue(got)[v]; !maps.Equal(h, want[v]) || len(byValue(got)) > 1 {
			t.Fatalf("%s:%s per hour: %v, the feed lists %v", key, v, byValue(got), want[v])
		}
	}
	got, err := db.CountTagHours(t.Context(), account, "shop", key, nil, from, to, 1000)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	all := byValue(got)
	for v, h := range want {
		if len(h) == 0 {
			delete(want, v)
		}
	}
	if !maps.EqualFunc(all, want, maps.Equal) {
		t.Fatalf("%s per value and hour: %v, the feed lists %v", key, all, want)
	}
	if !slices.IsSortedFunc(got, func(a, b tidings.TagHourCount) int { return a.Hour.Compare(b.Hour) }) {
		t.Fatalf("%s: not in hour order: %v", key, got)
	}
}

func byValue(counts []tidings.TagHourCount) map[string]map[int64]int64 {
	out := map[string]map[int64]int64{}
	for _, c := range counts {
		if out[c.Value] == nil {
			out[c.Value] = map[int64]int64{}
		}
		if c.N <= 0 {
			panic(fmt.Sprint("a count of ", c))
		}
		out[c.Value][ms(c.Hour)] += c.N
	}
	return out
}

func checkClean(t *testing.T, db *DB) {
	t.Helper()
	r, err := db.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("check: %v (+%d)", r.Problems, r.Omitted)
	}
}

// TestTagHoursKept: a tag rolls in the batch that brings it to the threshold, and its
// hourly counts stay those of the feed through publishes, deletions, the purge and a
// channel's deletion; CountTagHours answers what the feed lists, for rolled and rare
// values, of this account only.
func TestTagHoursKept(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, accounts := rollupStore(t)
	acme, umbrella := accounts[0].ID, accounts[1].ID
	base := time.Now().UTC().Truncate(time.Hour).Add(-40 * time.Hour)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * 23 * time.Minute) }
	channel := func(i int) string { return []string{"orders", "deploys"}[i%2] }
	from, to := base.Add(-time.Hour), time.Now().Add(time.Hour)
	values := []string{"pro", "free", "trial"}
	// The other account's same project and tags, in the same hours, rolled too.
	var other []*tidings.NewEvent
	for i := range 30 {
		other = append(other, tagEvent(channel(i), at(i), "plan:pro"))
	}
	publishAll(t, db, umbrella, other...)

	for i := range testRollup - 5 {
		if _, err := db.PublishEvent(ctx, acme, tagEvent(channel(i), at(i), "plan:pro", "ref:r"+fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if r, rows := rolled(t, db, acme, "plan", "pro"); r || rows != 0 {
		t.Fatalf("under the threshold: rolled %v, %d rows", r, rows)
	}
	sameAsFeed(t, db, acme, "plan", values, from, to)
	// One batch crosses it: its events are counted too.
	var batch []*tidings.NewEvent
	for i := testRollup - 5; i < testRollup+5; i++ {
		batch = append(batch, tagEvent(channel(i), at(i), "plan:pro"), tagEvent(channel(i), at(i), "plan:free"))
	}
	publishAll(t, db, acme, batch...)
	if r, rows := rolled(t, db, acme, "plan", "pro"); !r || rows == 0 {
		t.Fatalf("over the threshold: rolled %v, %d rows", r, rows)
	}
	if r, _ := rolled(t, db, acme, "plan", "free"); r {
		t.Fatal("plan:free rolled at 10 events")
	}
	checkClean(t, db)
	sameAsFeed(t, db, acme, "plan", values, from, to)
	sameAsFeed(t, db, umbrella, "plan", values, from, to)

	// More publishes, one at a time and in batches, in hours old and new.
	for i := range 20 {
		if _, err := db.PublishEvent(ctx, acme, tagEvent(channel(i), at(3*i), "plan:pro", "plan2:x")); err != nil {
			t.Fatal(err)
		}
	}
	publishAll(t, db, acme, tagEvent("orders", at(90), "plan:pro"), tagEvent("orders", at(90), "plan:trial"))
	checkClean(t, db)
	sameAsFeed(t, db, acme, "plan", values, from, to)

	// DeleteEvent: the only event of its hour, and one of many.
	lone, err := db.PublishEvent(ctx, acme, tagEvent("orders", base.Add(-30*time.Minute), "plan:pro"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteEvent(ctx, acme, "shop", lone.ID); err != nil {
		t.Fatal(err)
	}
	page, err := db.ListEvents(ctx, acme, tidings.EventQuery{Project: "shop", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Events {
		if err := db.DeleteEvent(ctx, acme, "shop", e.ID); err != nil {
			t.Fatal(err)
		}
	}
	checkClean(t, db)
	sameAsFeed(t, db, acme, "plan", values, from, to)

	// The purge: a retention of a week, seven days less 30 hours from now, takes the
	// oldest events.
	if err := db.SetRetention(ctx, acme, "shop", 7); err != nil {
		t.Fatal(err)
	}
	if n, err := db.PurgeExpired(ctx, time.Now().Add(7*24*time.Hour-30*time.Hour), 1000); err != nil || n == 0 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	checkClean(t, db)
	sameAsFeed(t, db, acme, "plan", values, from, to)

	// A channel deleted takes its events out of the counts; the tag stays rolled below
	// the threshold.
	if err := db.DeleteChannel(ctx, acme, "shop", "deploys"); err != nil {
		t.Fatal(err)
	}
	checkClean(t, db)
	sameAsFeed(t, db, acme, "plan", values, from, to)
	sameAsFeed(t, db, umbrella, "plan", values, from, to)
	if r, _ := rolled(t, db, acme, "plan", "pro"); !r {
		t.Fatal("plan:pro unrolled")
	}

	// A value no event has, a key no event has, an unknown project.
	none := "none"
	if got, err := db.CountTagHours(ctx, acme, "shop", "plan", &none, from, to, 10); err != nil || len(got) != 0 {
		t.Fatalf("an unknown value: %v, %v", got, err)
	}
	if got, err := db.CountTagHours(ctx, acme, "shop", "nokey", nil, from, to, 10); err != nil || len(got) != 0 {
		t.Fatalf("an unknown key: %v, %v", got, err)
	}
	if _, err := db.CountTagHours(ctx, acme, "nope", "plan", nil, from, to, 10); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("an unknown project: %v", err)
	}
}

// TestTagHoursBudget: the rare values of a key are read only when their counts add up
// to at most max; a rolled value costs nothing of it.
func TestTagHoursBudget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, accounts := rollupStore(t)
	acme := accounts[0].ID
	base := time.Now().UTC().Truncate(time.Hour).Add(-10 * time.Hour)
	var events []*tidings.NewEvent
	for i := range 50 {
		events = append(events, tagEvent("orders", base.Add(time.Duration(i)*7*time.Minute), "ref:r"+fmt.Sprint(i), "plan:pro"))
	}
	publishAll(t, db, acme, events...)
	from, to := base, time.Now().Add(time.Hour)
	if _, err := db.CountTagHours(ctx, acme, "shop", "ref", nil, from, to, 49); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("50 rare values, a budget of 49: %v", err)
	}
	got, err := db.CountTagHours(ctx, acme, "shop", "ref", nil, from, to, 50)
	if err != nil || len(got) != 50 {
		t.Fatalf("50 rare values, a budget of 50: %d counts, %v", len(got), err)
	}
	r1 := "r1"
	if _, err := db.CountTagHours(ctx, acme, "shop", "ref", &r1, from, to, 0); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("a rare value, a budget of 0: %v", err)
	}
	// plan:pro is rolled: read from its rows, whatever the budget.
	pro := "pro"
	got, err = db.CountTagHours(ctx, acme, "shop", "plan", &pro, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range got {
		n += c.N
	}
	if n != 50 {
		t.Fatalf("plan:pro counts %d events, want 50", n)
	}
	sameAsFeed(t, db, acme, "plan", []string{"pro"}, from, to)
	// A range that is not whole hours reads the hours that begin in it.
	sameAsFeed(t, db, acme, "plan", []string{"pro"}, base.Add(90*time.Minute), base.Add(200*time.Minute))
	var refs []string
	for i := range 50 {
		refs = append(refs, "r"+fmt.Sprint(i))
	}
	sameAsFeed(t, db, acme, "ref", refs, base.Add(90*time.Minute), base.Add(200*time.Minute))
}

// TestCheckFindsTagHourDamage damages the hourly tag counts one way at a time and
// expects the check, and the read-only one, to name it.
func TestCheckFindsTagHourDamage(t *testing.T) {
	t.Parallel()
	const rolledTag = `(SELECT min(id) FROM tags WHERE rolled)`
	for _, c := range []struct {
		name, kind string
		damage     string
	}{
		{"an hour's count off by one", "tag_hour", `UPDATE tag_hours SET n = n + 1 WHERE tag_id = ` + rolledTag + ` AND hour = (SELECT max(hour) FROM tag_hours WHERE tag_id = ` + rolledTag + `)`},
		{"an hour's count gone", "tag_hour.missing", `DELETE FROM tag_hours WHERE tag_id = ` + rolledTag + ` AND hour = (SELECT min(hour) FROM tag_hours WHERE tag_id = ` + rolledTag + `)`},
		{"an hour's count of 0", "tag_hour.zero", `INSERT INTO tag_hours (tag_id, hour, n) SELECT ` + rolledTag + `, 3600000, 0`},
		{"a stray row of a rare tag", "tag_hour.unrolled", `INSERT INTO tag_hours (tag_id, hour, n) SELECT min(id), 3600000, 1 FROM tags WHERE NOT rolled`},
		{"the rolled flag unset", "tag_hour.rolled", `UPDATE tags SET rolled = 0 WHERE id = ` + rolledTag},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db, err := Open(t.Context(), dir, Options{TagRollup: testRollup})
			if err != nil {
				t.Fatal(err)
			}
			a, err := db.CreateAccount(t.Context(), "acme")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateProject(t.Context(), a.ID, "shop"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateChannel(t.Context(), a.ID, "shop", "orders"); err != nil {
				t.Fatal(err)
			}
			base := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
			var events []*tidings.NewEvent
			for i := range 2 * testRollup {
				events = append(events, tagEvent("orders", base.Add(time.Duration(i)*10*time.Minute), "plan:pro", "ref:r"+fmt.Sprint(i)))
			}
			publishAll(t, db, a.ID, events...)
			checkClean(t, db)
			if res, err := db.write.ExecContext(t.Context(), c.damage); err != nil {
				t.Fatalf("%s: %v", c.damage, err)
			} else if n, _ := res.RowsAffected(); n == 0 {
				t.Fatalf("%s changed nothing", c.damage)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(context.Context, string, Options) (*DB, error){Open, OpenReadOnly} {
				db, err := open(t.Context(), dir, Options{TagRollup: testRollup, SkipSearchBackfill: true})
				if err != nil {
					t.Fatal(err)
				}
				r, err := db.Check(t.Context())
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
				var kinds []string
				found := false
				for _, p := range r.Problems {
					kinds = append(kinds, p.String())
					found = found || p.Kind == c.kind
				}
				if !found {
					t.Fatalf("check after %q: want a %s, found %d: %s", c.damage, c.kind, len(r.Problems), strings.Join(kinds, "; "))
				}
			}
		})
	}
}
