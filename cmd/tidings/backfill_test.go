package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestServeBackfillsSearch: the server indexes for search the events an upgrade left
// unindexed (SQLite's migration 18 makes the full-text index anew; an import into
// PostgreSQL by migrate-store leaves its copy to index) before it serves, so a search
// finds them. The server skipped it, as a management command does, since its pool got
// a default size: the upgraded events were never found.
func TestServeBackfillsSearch(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	m := startServer(t, data, nil)
	tok := setupAccount(t, data) // acme, my-saas, payments, a full token
	for _, name := range []string{"Paid invoice", "Paid again", "Refund"} {
		if status, resp := post(t, m.URL()+"/v1/log", tok, `{"project":"my-saas","channel":"payments","event":"`+name+`"}`); status != 200 {
			t.Fatalf("publish: %d %s", status, resp)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// The store as an upgrade leaves it: every event still to index for search.
	raw := openRaw(t, data)
	unindex := []string{`DELETE FROM events_fts`, `UPDATE search_backfill SET next_seq = (SELECT max(seq) FROM events)`}
	if testbackend.IsURL(data) {
		unindex = []string{`UPDATE events SET search = NULL`, `UPDATE search_backfill SET next_id = 'g'`}
	}
	for _, q := range unindex {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	m = startServer(t, data, nil)
	req, _ := http.NewRequest("GET", m.URL()+"/v1/events?project=my-saas&q=paid", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var page struct{ Events []struct{ Event string } }
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != 200 {
		t.Fatalf("search: %d %v", res.StatusCode, err)
	}
	if len(page.Events) != 2 {
		t.Fatalf("a search after the upgrade found %+v, want the two paid events", page.Events)
	}
}
