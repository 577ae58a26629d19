package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/pgtest"
)

// TestDigestPlans: each of DigestOf's queries reads its rows through the index that
// bounds it (the roll-up's key, the events' project and time, the insights' project
// and points' insight and time, the people's project and first_seen), never a whole
// table: with sequential scans priced out, no plan has one, and each names its index.
// (An empty table would rightly be scanned: the pricing shows which index can serve.)
func TestDigestPlans(t *testing.T) {
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
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	const f, hf, ht, to = int64(1_767_580_200_000), int64(1_767_582_000_000), int64(1_767_664_800_000), int64(1_767_666_600_000)
	for _, c := range []struct {
		name, query string
		args        []any
		indexes     []string
		bounds      []string // what an Index Cond must bound
	}{
		{"channels", sqlDigestChannels, []any{1, hf, ht, f, to}, []string{"event_counts_pkey", "events_channel_ts"},
			[]string{"(hour >= '1767582000000'", "(ts >= '1767580200000'", "(ts >= '1767664800000'"}},
		{"top events", sqlDigestTop, []any{1, f, to, digestTopScan}, []string{"events_project_ts"}, []string{"(ts >= '1767580200000'"}},
		{"insights", sqlDigestInsights, []any{1, f, to}, []string{"insights_project_id_title_key", "insight_points_insight_ts"},
			[]string{"(ts >= '1767580200000'"}},
		{"new people", sqlDigestNewCount, []any{1, f, to}, []string{"people_first_seen"}, []string{"(first_seen >= '1767580200000'"}},
		{"new people's ids", sqlDigestNewIDs, []any{1, f, to}, []string{"people_first_seen"}, []string{"(first_seen >= '1767580200000'"}},
	} {
		var plan string
		if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+c.query, c.args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if strings.Contains(plan, `"Seq Scan"`) {
			t.Errorf("%s: the plan scans a table:\n%s", c.name, plan)
		}
		for _, ix := range c.indexes {
			if !strings.Contains(plan, `"Index Name": "`+ix+`"`) {
				t.Errorf("%s: the plan does not read %s:\n%s", c.name, ix, plan)
			}
		}
		for _, b := range c.bounds {
			if !strings.Contains(plan, `"Index Cond": "(`) || !strings.Contains(plan, b) {
				t.Errorf("%s: no index range bounded by %s:\n%s", c.name, b, plan)
			}
		}
	}
}
