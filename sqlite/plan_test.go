package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// The feed's queries must read an index from where the page starts and stop at its end:
// no scan of a table or of a whole project's index, no sort of everything found.
// Plans are checked here so that no hot query silently turns into a scan (on 10 million
// events such a query took from seconds to minutes; docs/performance.md).
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := &cursor{ts: 1, seq: 2}
	rare, common := feedTag{id: 1, count: 10}, feedTag{id: 2, count: 1_000_000}
	id := make([]byte, 16)
	words := []tidings.Term{{Words: []string{"payment", "failed"}}, {Words: []string{"subscr"}, Prefix: true}}
	cases := map[string]struct {
		q    eventQuery
		want []string // each must appear in the plan
	}{
		"project page":           {listQuery(feedFilter{project: 1, limit: 51}), []string{"USING INDEX events_project_ts (project_id=?)"}},
		"channel page":           {listQuery(feedFilter{project: 1, channel: 5, channelCount: 100, limit: 51}), []string{"USING INDEX events_channel_ts (channel_id=?)"}},
		"deep project page":      {listQuery(feedFilter{project: 1, before: at, limit: 51}), []string{"events_project_ts (project_id=? AND ts<?)"}},
		"deep channel page":      {listQuery(feedFilter{project: 1, channel: 5, channelCount: 100, before: at, limit: 51}), []string{"events_channel_ts (channel_id=? AND ts<?)"}},
		"tag":                    {listQuery(feedFilter{project: 1, tags: []feedTag{rare}, limit: 51}), []string{"SEARCH d USING PRIMARY KEY (tag_id=?)", "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"}},
		"deep tag page":          {listQuery(feedFilter{project: 1, tags: []feedTag{common}, before: at, limit: 51}), []string{"SEARCH d USING PRIMARY KEY (tag_id=? AND (ts,seq)<(?,?))"}},
		"rare tag in a channel":  {listQuery(feedFilter{project: 1, channel: 5, channelCount: 5000, tags: []feedTag{rare}, limit: 51}), []string{"SEARCH d USING PRIMARY KEY (tag_id=?)"}},
		"common tag, small chan": {listQuery(feedFilter{project: 1, channel: 5, channelCount: 5000, tags: []feedTag{common}, limit: 51}), []string{"events_channel_ts (channel_id=?)", "SEARCH x EXISTS USING PRIMARY KEY (tag_id=? AND ts=? AND seq=?)"}},
		"two tags":               {listQuery(feedFilter{project: 1, tags: []feedTag{common, rare}, limit: 51}), []string{"SEARCH d USING PRIMARY KEY (tag_id=?)", "SEARCH x EXISTS USING PRIMARY KEY (tag_id=? AND ts=? AND seq=?)"}},
		"since, project":         {listQuery(feedFilter{project: 1, since: 1000, until: 2000, limit: 51}), []string{"events_project_ts (project_id=? AND ts>? AND ts<?)"}},
		// A search reads at most searchBudget+1 rows of the full-text index (the LIMIT of
		// its subquery), the only plan allowed to sort what it found.
		"search":               {listQuery(feedFilter{project: 1, terms: words, limit: 51}), []string{"SCAN events_fts VIRTUAL TABLE INDEX", "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"}},
		"search, deep, tagged": {listQuery(feedFilter{project: 1, channel: 5, tags: []feedTag{rare}, terms: words, before: at, since: 1000, limit: 51}), []string{"SCAN events_fts VIRTUAL TABLE INDEX", "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"}},
		"search, candidates":   {countCandidates(feedFilter{project: 1, terms: words, minSeq: 7}), []string{"SCAN events_fts VIRTUAL TABLE INDEX"}},
		"live catch-up":        {afterQuery(eventColumns, id, 1, 100), []string{"SEARCH e USING INTEGER PRIMARY KEY (rowid>?)", "USING COVERING INDEX events_id (id>?)"}},
		// A priority range without the default: a walk of the priority index per priority,
		// each a page long, merged (the only other plan allowed to sort: at most 5 pages).
		"priority urgent":           {listQuery(feedFilter{project: 1, minPriority: 5, maxPriority: 5, limit: 51}), []string{"INDEX events_priority (project_id=? AND priority=?)"}},
		"priority >=high, deep":     {listQuery(feedFilter{project: 1, minPriority: 4, before: at, limit: 51}), []string{"INDEX events_priority (project_id=? AND priority=? AND ts<?)"}},
		"priority <=low, channel":   {listQuery(feedFilter{project: 1, channel: 5, channelCount: 100, maxPriority: 2, limit: 51}), []string{"INDEX events_channel_priority (channel_id=? AND priority=?)"}},
		"priority urgent, tag":      {listQuery(feedFilter{project: 1, tags: []feedTag{common}, minPriority: 5, priorityDrives: true, limit: 51}), []string{"INDEX events_priority (project_id=? AND priority=?)", "SEARCH x EXISTS USING PRIMARY KEY (tag_id=? AND ts=? AND seq=?)"}},
		"priority urgent, rare tag": {listQuery(feedFilter{project: 1, tags: []feedTag{rare}, minPriority: 5, limit: 51}), []string{"SEARCH d USING PRIMARY KEY (tag_id=?)"}},
		"priority >=default":        {listQuery(feedFilter{project: 1, minPriority: 3, limit: 51}), []string{"USING INDEX events_project_ts (project_id=?)"}},
		"versions":                  {eventQuery{`SELECT ` + eventColumns + ` FROM events e WHERE e.channel_id = ? AND e.thread_key = ? ORDER BY e.seq DESC LIMIT ?`, []any{1, "k", 10}}, []string{"USING INDEX events_thread (channel_id=? AND thread_key=?)"}},
		"chart, project":            {countsQuery(1, 0, 0, 3_600_000), []string{"SEARCH event_counts USING PRIMARY KEY (channel_id=? AND hour>?)"}},
		"chart, channel":            {countsQuery(1, 5, 0, 3_600_000), []string{"SEARCH event_counts USING PRIMARY KEY (channel_id=? AND hour>?)"}},
	}
	for name, c := range cases {
		rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.q.sql, c.q.args...)
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
			// A scan of a table or an index reads everything: only the full-text index's
			// own walk and the search's candidates (SCAN x) may be scanned.
			// A priority page's walks are co-routines of a page each (SCAN (subquery-N)).
			if strings.HasPrefix(line, "SCAN ") && !strings.HasPrefix(line, "SCAN events_fts VIRTUAL TABLE") && line != "SCAN x" && line != "SCAN (subquery-1)" &&
				!(strings.HasPrefix(name, "priority") && strings.HasPrefix(line, "SCAN (subquery-")) {
				t.Errorf("%s: plan has %q:\n%s", name, line, text)
			}
		}
		merged := strings.HasPrefix(name, "priority") && strings.Contains(c.q.sql, "LIMIT ?)) x")
		if strings.Contains(text, "TEMP B-TREE FOR ORDER BY") && !(strings.HasPrefix(name, "search") && strings.Contains(c.q.sql, "LIMIT ?) x")) && !merged {
			t.Errorf("%s: plan sorts what it found:\n%s", name, text) // only a search's candidates, at most searchBudget+1
		}
		for _, want := range c.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s: plan lacks %q:\n%s", name, want, text)
			}
		}
	}
}
