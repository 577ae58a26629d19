package api_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

type eventsPage struct {
	Events []struct {
		ID, Event, Channel string
		Tags               map[string]any
	}
	Next *string
}

func TestReadEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	_, err := e.store.CreateChannel(t.Context(), e.acme.ID, "my-saas", "deploys")
	e.must(err)
	for i := 0; i < 7; i++ {
		plan := "basic"
		if i%2 == 0 {
			plan = "premium"
		}
		e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": fmt.Sprintf("Paid %d", i),
			"tags": map[string]any{"plan": plan, "seats": i}}))
	}
	e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"channel": "deploys", "event": "Deploy failed",
		"description": "build 42 broke"}))

	get := func(q string) eventsPage {
		t.Helper()
		r := e.do("GET", "/v1/events?"+q, e.full, "")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return decode[eventsPage](t, r)
	}
	if p := get("project=my-saas"); len(p.Events) != 8 || p.Next != nil || p.Events[0].Event != "Deploy failed" {
		t.Fatalf("all: %+v", p)
	}
	if p := get("project=my-saas&channel=deploys"); len(p.Events) != 1 {
		t.Fatalf("channel: %+v", p)
	}
	if p := get("project=my-saas&tag=plan:premium"); len(p.Events) != 4 {
		t.Fatalf("tag: %d events", len(p.Events))
	}
	if p := get("project=my-saas&tag=plan:premium&tag=seats:2"); len(p.Events) != 1 || p.Events[0].Event != "Paid 2" {
		t.Fatalf("two tags: %+v", p)
	}
	if p := get("project=my-saas&q=" + url.QueryEscape("BUILD 42")); len(p.Events) != 1 {
		t.Fatalf("text: %+v", p)
	}
	// q= has the search box's syntax: prefixes, phrases, tags and a time range.
	for q, want := range map[string]int{
		"bui*":                             1,
		`"42 broke"`:                       1,
		`"broke 42"`:                       0,
		"paid plan:premium":                4,
		"paid plan:premium seats:2":        1,
		"since:1h":                         8,
		"before:2000-01-01":                0,
		"deploy since:1h after:2000-01-01": 1,
	} {
		if p := get("project=my-saas&q=" + url.QueryEscape(q)); len(p.Events) != want {
			t.Errorf("q=%s: %d events, want %d", q, len(p.Events), want)
		}
	}
	// Pages of 3 walk all 8 events without duplicates while new ones arrive.
	seen := map[string]bool{}
	q := "project=my-saas&limit=3"
	for pages := 0; ; pages++ {
		p := get(q)
		e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "new"}))
		for _, ev := range p.Events {
			if seen[ev.ID] || ev.Event == "new" {
				t.Fatalf("page %d: duplicate or new event %s", pages, ev.Event)
			}
			seen[ev.ID] = true
		}
		if p.Next == nil {
			break
		}
		q = "project=my-saas&limit=3&before=" + *p.Next
	}
	if len(seen) != 8 {
		t.Fatalf("walked %d events, want 8", len(seen))
	}

	for q, path := range map[string]string{
		"":                                "project",
		"project=My":                      "project",
		"project=my-saas&limit=0":         "limit",
		"project=my-saas&limit=101":       "limit",
		"project=my-saas&limit=x":         "limit",
		"project=my-saas&tag=nocolon":     "tag",
		"project=my-saas&before=unknown":  "before",
		"project=my-saas&channel=Bad_One": "channel",
		"project=my-saas&q=since:7y":      "q",
		"project=my-saas&q=a*":            "q",
		"project=my-saas&q=after:never":   "q",
	} {
		r := e.do("GET", "/v1/events?"+q, e.full, "")
		e.want(r, 400, "validation_failed")
		if !r.has(path, "") {
			t.Fatalf("%q: no problem at %s: %s", q, path, r.body)
		}
	}
	r := e.do("GET", "/v1/events?project=my-saas&channel=nope", e.full, "")
	e.want(r, 404, "channel_not_found")
}

// TestSearchUsesTheServersClock: "since:" counts back from the server's clock (the
// injected one), not the machine's: a server an hour ahead sees an event of 90 minutes
// before its now as older than since:1h.
func TestSearchUsesTheServersClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC)
	e := newEnvClock(t, noLimits, func() time.Time { return now })
	for _, at := range []time.Time{now.Add(-90 * time.Minute), now.Add(-30 * time.Minute)} {
		r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "at " + at.Format("15:04"), "timestamp": at.Unix()}))
		if r.status != 200 {
			t.Fatalf("publish: %d %s", r.status, r.body)
		}
	}
	r := e.do("GET", "/v1/events?project=my-saas&q=since:1h", e.full, "")
	if p := decode[eventsPage](t, r); r.status != 200 || len(p.Events) != 1 || p.Events[0].Event != "at 11:30" {
		t.Fatalf("since:1h at %v: %d %s", now, r.status, r.body)
	}
}
