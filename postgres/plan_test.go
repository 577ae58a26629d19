package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
)

// TestQueryPlans checks that every shape of feed query can be answered by walking an
// index in the feed's order and stopping at the page's end: its plan, with sorts and
// sequential scans priced out, has no sort and no sequential scan, and a deep page's
// cursor bounds the index scan rather than filtering what it reads. (On a small test
// table PostgreSQL would rightly prefer a scan; the read benchmark at 10 million events,
// bench/seed -reads, shows the planner choosing these plans on a real store.)
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.URL(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off`); err != nil {
		t.Fatal(err)
	}
	pro, eu := tidings.Tag{Key: "plan", Value: "pro"}, tidings.Tag{Key: "region", Value: "eu"}
	before := &cursor{ts: 1_700_000_000_000, id: "0190f1c2-0000-7000-8000-000000000000"}
	for name, c := range map[string]struct {
		channel int64
		tags    []tidings.Tag
		driver  int
		before  *cursor
	}{
		"project":                     {driver: -1},
		"channel":                     {channel: 2, driver: -1},
		"deep page, project":          {driver: -1, before: before},
		"deep page, channel":          {channel: 2, driver: -1, before: before},
		"tag":                         {tags: []tidings.Tag{pro}, driver: 0},
		"tag, deep page":              {tags: []tidings.Tag{pro}, driver: 0, before: before},
		"tag in a channel, deep page": {channel: 2, tags: []tidings.Tag{pro}, driver: 0, before: before},
		"channel with a tag":          {channel: 2, tags: []tidings.Tag{pro}, driver: -1},
		"two tags":                    {tags: []tidings.Tag{pro, eu}, driver: 1},
	} {
		q, args := listQuery(1, c.channel, "", "", c.tags, c.driver, time.Time{}, time.Time{}, c.before, 51)
		var plan string
		if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+q, args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(plan, `Sort"`) || strings.Contains(plan, `"Seq Scan"`) {
			t.Errorf("%s: the plan sorts or scans a table:\n%s\n%s", name, q, plan)
		}
		if c.before != nil && !strings.Contains(plan, `"Index Cond": "((`) || c.before != nil && !strings.Contains(plan, "ROW(") {
			t.Errorf("%s: the cursor does not bound the index scan:\n%s\n%s", name, q, plan)
		}
	}
	// Word searches: the walk reads the project's time index in order; the other sources
	// read their candidates from an index (and sort at most searchCandidates of them).
	// Which index the GIN source reads depends on statistics an empty table lacks: the
	// read benchmark at 10 million events shows it (bench/seed -reads).
	words := []tidings.Term{{Words: []string{"payment", "failed"}}, {Words: []string{"subscr"}, Prefix: true}}
	if _, err := conn.Exec(ctx, `SET enable_bitmapscan = on`); err != nil { // a GIN index is read only by bitmap
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		channel int64
		tags    []tidings.Tag
		src     source
	}{
		"walk":                {src: source{kind: fromProject}},
		"walk, channel, tags": {channel: 2, tags: []tidings.Tag{pro, eu}, src: source{kind: fromProject}},
		"from a tag":          {tags: []tidings.Tag{pro, eu}, src: source{kind: fromTag, tag: 1}},
		"from a channel":      {channel: 2, tags: []tidings.Tag{pro}, src: source{kind: fromChannel}},
		"from the GIN index":  {tags: []tidings.Tag{pro}, src: source{kind: fromWords}},
		"a user's journey":    {src: source{kind: fromUser}},
		"a group's journey":   {channel: 2, tags: []tidings.Tag{pro}, src: source{kind: fromUser}},
	} {
		var users []string
		if c.src.kind == fromUser {
			users = []string{"user-42", "user-43", "user-44"}
		}
		q, args := searchQuery(1, c.channel, "", "", c.tags, words, users, time.Unix(1, 0), time.Time{}, before, 51, c.src)
		var plan string
		if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+q, args...).Scan(&plan); err != nil {
			t.Fatalf("search %s: %v\n%s", name, err, q)
		}
		if strings.Contains(plan, `"Seq Scan"`) || c.src.kind == fromProject && strings.Contains(plan, `Sort"`) {
			t.Errorf("search %s: the plan scans a table or sorts a walk:\n%s\n%s", name, q, plan)
		}
		// A journey sorts only each user's first page (Limit over the index, per user),
		// and the page made of them.
		if c.src.kind == fromUser && (strings.Count(plan, `"Node Type": "Sort"`) > 2 || !strings.Contains(plan, `"Node Type": "Limit"`)) {
			t.Errorf("search %s: a journey sorts more than the users' first pages:\n%s\n%s", name, q, plan)
		}
		if c.src.kind == fromUser && !strings.Contains(plan, "events_user") {
			t.Errorf("search %s: the journey does not read events_user:\n%s", name, plan)
		}
	}
}
