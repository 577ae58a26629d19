package postgres

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
)

// Events stored before search (or copied by migrate-store) are indexed when the store
// opens, newest first, a chunk per transaction, with progress in the log.
func TestSearchBackfill(t *testing.T) {
	old := backfillChunk
	backfillChunk = 7
	t.Cleanup(func() { backfillChunk = old })
	ctx := context.Background()
	url := pgtest.URL(t)
	db, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := db.CreateAccount(ctx, "acme")
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateChannel(ctx, a.ID, "shop", "payments")
	const n = 30
	for i := range n {
		if _, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "payments",
			Event: fmt.Sprintf("Zahlung %d in Zürich", i), Parser: tidings.ParserText}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.pool.Exec(ctx, `UPDATE events SET search = NULL; UPDATE search_backfill SET next_id = 'g'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var logged bytes.Buffer
	db, err = Open(ctx, url, Options{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !strings.Contains(logged.String(), fmt.Sprint("events=", n)) || !strings.Contains(logged.String(), "indexed the stored events") {
		t.Fatalf("backfill not announced:\n%s", logged.String())
	}
	s, _ := tidings.ParseSearch("zurich zahl*", time.Now())
	eq := tidings.EventQuery{Project: "shop", Limit: 100}
	eq.AddSearch(s)
	p, err := db.ListEvents(ctx, a.ID, eq)
	if err != nil || len(p.Events) != n {
		t.Fatalf("search after the backfill: %d events, %v", len(p.Events), err)
	}
	var left int
	db.row(ctx, `SELECT count(*) FROM events WHERE search IS NULL`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d events left unindexed", left)
	}
}

// Every source of a word search's candidates gives the same page: the walk (forced
// here by allowing no candidates) and the sets read whole.
func TestSearchSources(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.URL(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, _ := db.CreateAccount(ctx, "acme")
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateChannel(ctx, a.ID, "shop", "payments")
	db.CreateChannel(ctx, a.ID, "shop", "refunds")
	base := time.Now().Add(-time.Hour)
	for i := range 60 {
		ch := []string{"payments", "refunds"}[i%2]
		if _, err := db.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: ch, Event: fmt.Sprintf("Payment %d failed", i),
			Parser: tidings.ParserText, Timestamp: base.Add(-time.Duration(i) * time.Minute), // older as they arrive
			Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: []string{"free", "pro", "team"}[i%3]}}}); err != nil {
			t.Fatal(err)
		}
	}
	search := func(q, channel string) []string {
		s, _ := tidings.ParseSearch(q, time.Now())
		eq := tidings.EventQuery{Project: "shop", Channel: channel, Limit: 7}
		eq.AddSearch(s)
		var ids []string
		for {
			p, err := db.ListEvents(ctx, a.ID, eq)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range p.Events {
				ids = append(ids, ev.ID)
			}
			if p.Next == "" {
				return ids
			}
			eq.Before = p.Next
		}
	}
	for _, c := range []struct{ q, channel string }{{"failed", ""}, {"failed plan:pro", ""}, {"payment", "refunds"}, {`"payment 4*"`, ""}} {
		old := searchCandidates
		searchCandidates = -1
		walked := search(c.q, c.channel)
		searchCandidates = old
		if got := search(c.q, c.channel); !slices.Equal(got, walked) || len(got) == 0 {
			t.Errorf("%q in %q: %d events from a set, %d walking; they differ", c.q, c.channel, len(got), len(walked))
		}
	}
}
