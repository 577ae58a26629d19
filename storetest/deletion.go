package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// testDeleteOne deletes one event and one insight: each leaves every read — pages, tag
// filters, search, counts — and neither can be reached from another account.
func testDeleteOne(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	keep := f.publish(t, tidings.NewEvent{Event: "Refund issued", Tags: tidings.Tags{str("plan", "pro")}})
	gone := f.publish(t, tidings.NewEvent{Event: "Refund failed", Tags: tidings.Tags{str("plan", "pro"), str("order", "o-1")}})
	wantCode(t, f.s.DeleteEvent(ctx, other.ID, "my-saas", gone.ID), tidings.ENotFound)
	must(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", gone.ID))
	wantCode(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", gone.ID), tidings.ENotFound)
	wantCode(t, f.s.DeleteEvent(ctx, f.account.ID, "my-saas", "not-an-id"), tidings.ENotFound)
	wantCode(t, f.s.DeleteEvent(ctx, f.account.ID, "nope", keep.ID), tidings.EProjectNotFound)
	_, err := f.s.FindEvent(ctx, f.account.ID, "my-saas", gone.ID)
	wantCode(t, err, tidings.ENotFound)
	list := func(q tidings.EventQuery) []string {
		t.Helper()
		q.Project, q.Limit = "my-saas", 10
		p, err := f.s.ListEvents(ctx, f.account.ID, q)
		must(t, err)
		var ids []string
		for _, ev := range p.Events {
			ids = append(ids, ev.ID)
		}
		return ids
	}
	refund, _ := tidings.ParseSearch("refund", time.Now())
	for name, q := range map[string]tidings.EventQuery{
		"feed":   {},
		"tag":    {Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}},
		"search": {Terms: refund.Terms},
	} {
		if got := list(q); !slices.Equal(got, []string{keep.ID}) {
			t.Errorf("%s after the delete: %v, want only %s", name, got, keep.ID)
		}
	}
	if got := list(tidings.EventQuery{Tags: []tidings.Tag{{Key: "order", Value: "o-1"}}}); len(got) != 0 {
		t.Errorf("the deleted event's own tag still finds %v", got)
	}
	if n, err := f.s.CountEvents(ctx, f.account.ID, "my-saas", ""); err != nil || n != 1 {
		t.Errorf("count after the delete: %d %v", n, err)
	}
	counts, err := f.s.CountEventsBy(ctx, f.account.ID, "my-saas", "", keep.Timestamp.Truncate(time.Hour).Add(-24*time.Hour), time.Hour)
	must(t, err)
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != 1 {
		t.Errorf("hourly counts after the delete: %d events, want 1", total)
	}

	for _, v := range []string{"5", "7"} {
		_, err := f.s.ApplyInsight(ctx, f.account.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue",
			Value: v, ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
		must(t, err)
	}
	wantCode(t, f.s.DeleteInsight(ctx, other.ID, "my-saas", "Revenue"), tidings.ENotFound)
	must(t, f.s.DeleteInsight(ctx, f.account.ID, "my-saas", "Revenue"))
	wantCode(t, f.s.DeleteInsight(ctx, f.account.ID, "my-saas", "Revenue"), tidings.ENotFound)
	if ins, _ := f.s.ListInsights(ctx, f.account.ID, "my-saas"); len(ins) != 0 {
		t.Errorf("insights after the delete: %+v", ins)
	}
	// The same title starts a new history.
	_, err = f.s.ApplyInsight(ctx, f.account.ID, &tidings.InsightChange{Project: "my-saas", Title: "Revenue",
		Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
	must(t, err)
	if h, err := f.s.InsightHistory(ctx, f.account.ID, "my-saas", "Revenue", 10); err != nil || len(h) != 1 {
		t.Errorf("history of a re-created insight: %+v %v", h, err)
	}
}

// testRetention: a project that keeps events for 7 days loses the older ones to
// PurgeExpired, in batches of at most max, with its counts, tag filters and search
// kept right; a project kept forever, and another account's, lose nothing.
func testRetention(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	other := newAccount(t, f.s, "globex")
	now := time.Now().UTC()
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	var recent []string
	for i := range 25 {
		age := time.Duration(i) * 12 * time.Hour // 0 to 12 days old
		ev := f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("Paid %d", i), Timestamp: now.Add(-age), UserID: "buyer",
			Tags: tidings.Tags{str("plan", []string{"free", "pro"}[i%2])}})
		if age <= 7*24*time.Hour { // exactly 7 days old is still kept
			recent = append(recent, ev.ID)
		}
		if _, err := f.s.PublishEvent(ctx, other.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Theirs", Parser: tidings.ParserText, Timestamp: now.Add(-age)}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 7))
	wantCode(t, f.s.SetRetention(ctx, f.account.ID, "my-saas", 8), tidings.EValidation)
	wantCode(t, f.s.SetRetention(ctx, f.account.ID, "nope", 7), tidings.EProjectNotFound)
	if p, _ := f.s.FindProject(ctx, f.account.ID, "my-saas"); p.RetentionDays != 7 {
		t.Fatalf("retention = %d", p.RetentionDays)
	}
	total := 0
	for round := 0; ; round++ {
		n, err := f.s.PurgeExpired(ctx, now, 4)
		must(t, err)
		if n > 4 {
			t.Fatalf("a purge of at most 4 deleted %d", n)
		}
		total += n
		if n == 0 {
			break
		}
		if round > 20 {
			t.Fatal("the purge does not end")
		}
	}
	if total != 25-len(recent) {
		t.Fatalf("purged %d events, want %d", total, 25-len(recent))
	}
	p, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Limit: 100})
	must(t, err)
	var ids []string
	for _, ev := range p.Events {
		ids = append(ids, ev.ID)
	}
	if !slices.Equal(ids, recent) {
		t.Fatalf("kept %v, want %v", ids, recent)
	}
	if n, _ := f.s.CountEvents(ctx, f.account.ID, "my-saas", ""); n != len(recent) {
		t.Fatalf("count after the purge: %d, want %d", n, len(recent))
	}
	pro, _ := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Tags: []tidings.Tag{{Key: "plan", Value: "pro"}}, Limit: 100})
	paid, _ := tidings.ParseSearch("paid", now)
	found, _ := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Terms: paid.Terms, Limit: 100})
	if len(pro.Events) != len(recent)/2 || len(found.Events) != len(recent) {
		t.Fatalf("after the purge: plan:pro finds %d, paid finds %d; %d are kept", len(pro.Events), len(found.Events), len(recent))
	}
	if u, err := f.s.FindPerson(ctx, f.account.ID, "my-saas", "buyer"); err != nil || u.Events != int64(len(recent)) {
		t.Fatalf("the user's events after the purge: %+v %v, want %d", u, err, len(recent))
	}
	if n, _ := f.s.CountEvents(ctx, other.ID, "my-saas", ""); n != 25 {
		t.Fatalf("the other account kept %d of 25 events", n)
	}
}
