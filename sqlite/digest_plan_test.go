package sqlite

import (
	"context"
	"strings"
	"testing"
)

// DigestOf reads what its comment says: indexes from where its ranges start, no scan of
// a table, of a whole project's events or of its people, and no sort but the insights'
// (at most tidings.MaxInsightsPerProject rows).
func TestDigestPlans(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct {
		name string
		sql  string
		args []any
		want []string // each must appear in the plan
		sort bool     // may sort what it found
	}{
		{"channels", sqlDigestChannels, []any{1, 2, 3, 4, 5}, []string{
			"SEARCH c USING COVERING INDEX sqlite_autoindex_channels_1 (project_id=?)",
			"SEARCH k USING PRIMARY KEY (channel_id=? AND hour>? AND hour<?)",
			"SEARCH e USING COVERING INDEX events_channel_ts (channel_id=? AND ts>? AND ts<?)"}, false},
		{"top events", sqlDigestTop, []any{1, 2, 3, digestTopScan}, []string{
			"SEARCH e USING INDEX events_project_ts (project_id=? AND ts>? AND ts<?)"}, false},
		{"insights", sqlDigestInsights, []any{1, 2, 3, digestInsights}, []string{
			"SEARCH i USING INDEX sqlite_autoindex_insights_1 (project_id=?)",
			"SEARCH x USING COVERING INDEX insight_points_insight_ts (insight_id=? AND ts>? AND ts<?)"}, true},
		{"new users counted", sqlDigestNewUserCount, []any{1, 2, 3}, []string{
			"SEARCH people USING COVERING INDEX people_first_seen (project_id=? AND first_seen>? AND first_seen<?)"}, false},
		{"new users", sqlDigestNewUsers, []any{1, 2, 3, digestNewUsers}, []string{
			"people_first_seen (project_id=? AND first_seen>? AND first_seen<?)"}, false},
	}
	for _, c := range cases {
		rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.sql, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		for _, line := range plan {
			// The top events' subquery and the insights' are read as they come (SCAN of
			// a subquery's rows, not of a table).
			if strings.HasPrefix(line, "SCAN ") && !strings.HasPrefix(line, "SCAN (subquery-") {
				t.Errorf("%s: plan has %q:\n%s", c.name, line, text)
			}
		}
		if strings.Contains(text, "TEMP B-TREE FOR ORDER BY") && !c.sort {
			t.Errorf("%s: plan sorts what it found:\n%s", c.name, text)
		}
		for _, want := range c.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s: plan lacks %q:\n%s", c.name, want, text)
			}
		}
	}
}
