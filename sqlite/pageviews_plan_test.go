package sqlite

import (
	"context"
	"strings"
	"testing"
)

// The page views' reads must start where their page or range starts, by an index, and
// never scan a project's views or sort them: a project holds millions, a user 100,000.
func TestPageViewPlans(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	query := func(f viewFilter) []any { q, args := viewsQuery(f); return append([]any{q}, args...) }
	cases := map[string]struct {
		q      []any // the query and its arguments
		want   []string
		sorted bool // may sort what it found (a few rows: texts of a range's counts, a user's minutes' days)
	}{
		"project's views":       {q: query(viewFilter{project: 1, limit: 51}), want: []string{"USING INDEX page_views_recent (project_id=?)"}},
		"project's deep page":   {q: query(viewFilter{project: 1, before: &[2]int64{5, 6}, since: 1, until: 9, limit: 51}), want: []string{"page_views_recent (project_id=? AND ts>? AND ts<?)"}},
		"user's views":          {q: query(viewFilter{project: 1, person: 3, limit: 51}), want: []string{"USING INDEX page_views_person (person_ref=?)"}},
		"user's deep page":      {q: query(viewFilter{project: 1, person: 3, before: &[2]int64{5, 6}, limit: 51}), want: []string{"page_views_person (person_ref=? AND ts<?)"}},
		"expired views":         {q: []any{sqlExpiredViews, 1, 1000, 10}, want: []string{"page_views_recent (project_id=? AND ts<?)"}},
		"path totals":           {q: []any{sqlPathTotals, 1, 10, 20, 1}, want: []string{"page_path_days USING PRIMARY KEY (project_id=? AND day>? AND day<?)"}, sorted: true},
		"top pages":             {q: []any{topQuery("page_path_days", "path", "views"), 1, 10, 20, 1, 10}, want: []string{"page_path_days USING PRIMARY KEY (project_id=? AND day>? AND day<?)"}, sorted: true},
		"top referrers":         {q: []any{topQuery("page_referrer_days", "host", "entries"), 1, 10, 20, 1, 10}, want: []string{"page_referrer_days USING PRIMARY KEY (project_id=? AND day>? AND day<?)"}, sorted: true},
		"a minute's neighbours": {q: []any{sqlMinuteNeighbours, 3, 100}, want: []string{"user_minutes USING PRIMARY KEY (person_ref=? AND minute<?)", "user_minutes USING PRIMARY KEY (person_ref=? AND minute>?)"}},
		"activity span":         {q: []any{sqlActivitySpan, 3, 100}, want: []string{"user_minutes USING PRIMARY KEY (person_ref=? AND minute>?)"}},
		"activity day":          {q: []any{sqlActivityDay, 3, 100, 200}, want: []string{"user_minutes USING PRIMARY KEY (person_ref=? AND minute>? AND minute<?)"}},
		"user's top pages":      {q: []any{sqlUserTopPages, 1, 3, 10}, want: []string{"SEARCH c USING PRIMARY KEY (person_ref=?)"}, sorted: true},
		"people by events":      {q: []any{`SELECT id FROM people u WHERE u.project_id = ? AND (u.events, u.id) < (?, ?) ORDER BY u.events DESC, u.id DESC LIMIT 51`, 1, 5, 6}, want: []string{"people_events (project_id=? AND events<?)"}},
		"people by first seen":  {q: []any{`SELECT id FROM people u WHERE u.project_id = ? ORDER BY u.first_seen DESC, u.id DESC LIMIT 51`, 1}, want: []string{"people_first_seen (project_id=?)"}},
	}
	for name, c := range cases {
		rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.q[0].(string), c.q[1:]...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
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
			if strings.HasPrefix(line, "SCAN ") && line != "SCAN s" && line != "SCAN CONSTANT ROW" && !strings.HasPrefix(line, "SCAN (subquery") {
				t.Errorf("%s: plan has %q:\n%s", name, line, text)
			}
		}
		if strings.Contains(text, "TEMP B-TREE") && !c.sorted {
			t.Errorf("%s: plan sorts what it found:\n%s", name, text)
		}
		for _, want := range c.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s: plan lacks %q:\n%s", name, want, text)
			}
		}
	}
}
