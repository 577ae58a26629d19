package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func testEvents(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	tags := tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"},
		{Key: "seats", Kind: tidings.KindNumber, Value: "12.50"}, {Key: "trial", Kind: tidings.KindBool, Value: "false"}}
	ev := f.publish(t, tidings.NewEvent{Event: "New Subscription", Description: "**paid**", Icon: "💰",
		Notify: true, Tags: tags, Parser: tidings.ParserMarkdown, UserID: "u-1", Timestamp: epoch})
	if ev.ID == "" || !ev.Timestamp.Equal(epoch) || ev.CreatedAt.IsZero() {
		t.Fatalf("stored event = %+v", ev)
	}
	page, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Limit: 10})
	must(t, err)
	if len(page.Events) != 1 || page.Next != "" {
		t.Fatalf("ListEvents = %+v", page)
	}
	got := page.Events[0]
	gotJSON, _ := json.Marshal(got.Tags)
	if got.ID != ev.ID || got.Event != "New Subscription" || got.Description != "**paid**" || got.Icon != "💰" ||
		!got.Notify || got.Parser != "markdown" || got.UserID != "u-1" || got.Channel != "payments" ||
		string(gotJSON) != `{"plan":"premium","seats":12.50,"trial":false}` || !got.Timestamp.Equal(epoch) {
		t.Fatalf("read back %+v tags %s", got, gotJSON)
	}

	_, err = f.s.PublishEvent(ctx, f.account.ID, &tidings.NewEvent{Project: "nope", Channel: "payments", Event: "x", Parser: "text"})
	wantCode(t, err, tidings.EProjectNotFound)
	_, err = f.s.PublishEvent(ctx, f.account.ID, &tidings.NewEvent{Project: "my-saas", Channel: "deploys", Event: "x", Parser: "text"})
	wantCode(t, err, tidings.EChannelNotFound)

	must(t, f.s.SetAutoCreateChannels(ctx, f.account.ID, "my-saas", true))
	f.publish(t, tidings.NewEvent{Channel: "deploys", Event: "Deployed"})
	cs, err := f.s.ListChannels(ctx, f.account.ID, "my-saas")
	must(t, err)
	if len(cs) != 2 {
		t.Fatalf("channel not created on first event: %v", cs)
	}
}

func testEventQueries(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "deploys")
	must(t, err)
	f.publish(t, tidings.NewEvent{Event: "Paid", Description: "Invoice 100%_done",
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}, {Key: "country", Kind: tidings.KindString, Value: "de"}}})
	f.publish(t, tidings.NewEvent{Event: "Paid", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "basic"}}})
	f.publish(t, tidings.NewEvent{Channel: "deploys", Event: "Deploy failed",
		Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}}})

	count := func(q tidings.EventQuery) int {
		t.Helper()
		q.Project, q.Limit = "my-saas", 100
		p, err := f.s.ListEvents(ctx, f.account.ID, q)
		must(t, err)
		return len(p.Events)
	}
	premium := tidings.Tag{Key: "plan", Value: "premium"}
	search := func(text string) tidings.EventQuery {
		s, err := tidings.ParseSearch(text, time.Now())
		must(t, err)
		var q tidings.EventQuery
		q.AddSearch(s)
		return q
	}
	for name, c := range map[string]struct {
		q    tidings.EventQuery
		want int
	}{
		"all":                {tidings.EventQuery{}, 3},
		"channel":            {tidings.EventQuery{Channel: "deploys"}, 1},
		"tag":                {tidings.EventQuery{Tags: []tidings.Tag{premium}}, 2},
		"two tags":           {tidings.EventQuery{Tags: []tidings.Tag{premium, {Key: "country", Value: "de"}}}, 1},
		"tag and channel":    {tidings.EventQuery{Channel: "payments", Tags: []tidings.Tag{premium}}, 1},
		"text in name":       {search("FAILED"), 1},
		"text in descr":      {search("invoice"), 1},
		"like chars literal": {search("100%_"), 1},
		"like wildcard":      {search("1%e"), 0},
		"tag value":          {search("basic"), 1},
		"prefix":             {search("depl*"), 1},
		"phrase":             {search(`"deploy failed"`), 1},
		"phrase, reversed":   {search(`"failed deploy"`), 0},
		"word and tag":       {search("paid plan:premium"), 1},
		"word in channel":    {tidings.EventQuery{Channel: "deploys", Terms: search("paid").Terms}, 0},
	} {
		if got := count(c.q); got != c.want {
			t.Errorf("%s: %d events, want %d", name, got, c.want)
		}
	}
	_, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Channel: "nope", Limit: 1})
	wantCode(t, err, tidings.EChannelNotFound)
	_, err = f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Before: "nope", Limit: 1})
	wantCode(t, err, tidings.EValidation)
}

// testPagination walks the pages while new events keep arriving: every event that
// existed before the walk is seen exactly once, in order.
func testPagination(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	const n = 25
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		// Half share one timestamp, so ordering must fall back on the ID.
		ts := epoch.Add(time.Duration(i/2) * time.Second)
		ev := f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("e%d", i), Timestamp: ts})
		want[ev.ID] = true
	}
	seen := map[string]bool{}
	before := ""
	var last *tidings.Event
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("pagination does not end")
		}
		p, err := f.s.ListEvents(ctx, f.account.ID, tidings.EventQuery{Project: "my-saas", Before: before, Limit: 4})
		must(t, err)
		f.publish(t, tidings.NewEvent{Event: "arrives during the walk"})
		for _, ev := range p.Events {
			if seen[ev.ID] {
				t.Fatalf("event %s seen twice", ev.ID)
			}
			seen[ev.ID] = true
			if last != nil && (ev.Timestamp.After(last.Timestamp) || ev.Timestamp.Equal(last.Timestamp) && ev.ID > last.ID) {
				t.Fatalf("out of order: %v after %v", ev, last)
			}
			last = ev
		}
		if p.Next == "" {
			break
		}
		before = p.Next
	}
	for id := range want {
		if !seen[id] {
			t.Fatalf("event %s missed", id)
		}
	}
}

// testFilteredPagination pages through tag filters read from either side — a common
// tag in a rare channel (read from the channel), a rare tag in a busy channel (read
// from the tag) — with timestamps shared by pairs of events, and checks the filters
// after a channel and its events are deleted.
func testFilteredPagination(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", "rare")
	must(t, err)
	str := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	pro, user, only := str("plan", "pro"), str("user", "u1"), str("only", "rare")
	want := map[string][]string{} // query name → IDs, newest first
	var all []*tidings.Event
	for i := range 30 {
		tags := tidings.Tags{pro}
		if i == 7 || i == 21 {
			tags = append(tags, user)
		}
		ev := f.publish(t, tidings.NewEvent{Event: fmt.Sprintf("busy %d", i), Tags: tags,
			Timestamp: epoch.Add(time.Duration(i/2) * time.Second)})
		all = append(all, ev)
	}
	for i := range 6 {
		tags := tidings.Tags{pro, only}
		if i == 2 { // the rare tag in both channels: the channel must still be checked
			tags = append(tags, user)
		}
		ev := f.publish(t, tidings.NewEvent{Channel: "rare", Event: fmt.Sprintf("rare %d", i), Tags: tags,
			Timestamp: epoch.Add(time.Duration(i/2)*time.Second + 500*time.Millisecond)})
		all = append(all, ev)
	}
	newestFirst := func(keep func(*tidings.Event) bool) []string {
		var evs []*tidings.Event
		for _, ev := range all {
			if keep(ev) {
				evs = append(evs, ev)
			}
		}
		slices.SortFunc(evs, func(a, b *tidings.Event) int {
			if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		var ids []string
		for _, ev := range evs {
			ids = append(ids, ev.ID)
		}
		return ids
	}
	has := func(ev *tidings.Event, tag tidings.Tag) bool {
		return slices.ContainsFunc(ev.Tags, func(t tidings.Tag) bool { return t.Key == tag.Key && t.Value == tag.Value })
	}
	walk := func(q tidings.EventQuery, limit int) []string {
		t.Helper()
		var ids []string
		q.Project, q.Limit = "my-saas", limit
		for pages := 0; ; pages++ {
			if pages > 40 {
				t.Fatal("pagination does not end")
			}
			p, err := f.s.ListEvents(ctx, f.account.ID, q)
			must(t, err)
			for _, ev := range p.Events {
				ids = append(ids, ev.ID)
			}
			if p.Next == "" {
				return ids
			}
			q.Before = p.Next
		}
	}
	want["common tag, rare channel"] = newestFirst(func(ev *tidings.Event) bool { return ev.Channel == "rare" })
	want["rare tag, busy channel"] = newestFirst(func(ev *tidings.Event) bool { return has(ev, user) && ev.Channel == "payments" })
	want["common tag"] = newestFirst(func(ev *tidings.Event) bool { return true })
	want["two tags"] = newestFirst(func(ev *tidings.Event) bool { return has(ev, only) })
	for name, q := range map[string]tidings.EventQuery{
		"common tag, rare channel": {Channel: "rare", Tags: []tidings.Tag{pro}},
		"rare tag, busy channel":   {Channel: "payments", Tags: []tidings.Tag{pro, user}},
		"common tag":               {Tags: []tidings.Tag{pro}},
		"two tags":                 {Tags: []tidings.Tag{pro, only}},
	} {
		for _, limit := range []int{1, 4} {
			if got := walk(q, limit); !slices.Equal(got, want[name]) {
				t.Errorf("%s, pages of %d: %d events %v, want %d %v", name, limit, len(got), got, len(want[name]), want[name])
			}
		}
	}
	must(t, f.s.DeleteChannel(ctx, f.account.ID, "my-saas", "rare"))
	if got := walk(tidings.EventQuery{Tags: []tidings.Tag{pro}}, 7); len(got) != 30 {
		t.Errorf("after deleting the rare channel, plan=pro has %d events, want 30", len(got))
	}
	if got := walk(tidings.EventQuery{Tags: []tidings.Tag{only}}, 7); len(got) != 0 {
		t.Errorf("after deleting the rare channel, only=rare has %d events, want 0", len(got))
	}
	if got := walk(tidings.EventQuery{Channel: "payments", Tags: []tidings.Tag{pro, user}}, 7); len(got) != 2 {
		t.Errorf("after deleting the rare channel, user=u1 has %d events, want 2", len(got))
	}
}
