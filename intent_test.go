package tidings

import (
	"strings"
	"testing"
	"time"
)

func TestIntentFieldsCheck(t *testing.T) {
	now := time.Now()
	ok := func() *NewEvent {
		return &NewEvent{Project: "p", Channel: "c", Event: "Deploy"}
	}
	long := "https://example.com/" + strings.Repeat("a", MaxURLLen)
	bad := []struct {
		name, path, typ string
		edit            func(e *NewEvent)
	}{
		{"unknown priority", "priority", "enum", func(e *NewEvent) { e.Priority = "critical" }},
		{"priority 6", "priority", "enum", func(e *NewEvent) { e.Priority = "6" }},
		{"javascript url", "url", "format", func(e *NewEvent) { e.URL = "javascript:alert(1)" }},
		{"relative url", "url", "format", func(e *NewEvent) { e.URL = "/p/x" }},
		{"long url", "url", "too_long", func(e *NewEvent) { e.URL = long }},
		{"4 actions", "actions", "too_many", func(e *NewEvent) {
			e.Actions = []Action{{Label: "a", ID: "a"}, {Label: "b", ID: "b"}, {Label: "c", ID: "c"}, {Label: "d", ID: "d"}}
		}},
		{"empty label", "actions.0.label", "required", func(e *NewEvent) { e.Actions = []Action{{Label: " ", ID: "a"}} }},
		{"long label", "actions.0.label", "too_long", func(e *NewEvent) { e.Actions = []Action{{Label: strings.Repeat("x", 41), ID: "a"}} }},
		{"duplicate id", "actions.1.id", "duplicate", func(e *NewEvent) { e.Actions = []Action{{Label: "a", ID: "go"}, {Label: "b", ID: "go"}} }},
		{"bad id", "actions.0.id", "pattern", func(e *NewEvent) { e.Actions = []Action{{Label: "a", ID: "Go Now"}} }},
		{"url and id", "actions.0", "one_of", func(e *NewEvent) { e.Actions = []Action{{Label: "a", ID: "a", URL: "https://x.io"}} }},
		{"neither", "actions.0", "one_of", func(e *NewEvent) { e.Actions = []Action{{Label: "a"}} }},
		{"action javascript url", "actions.0.url", "format", func(e *NewEvent) { e.Actions = []Action{{Label: "a", URL: "javascript:x"}} }},
		{"key control", "key", "control_character", func(e *NewEvent) { e.ThreadKey = "deploy\n1" }},
		{"key too long", "key", "too_long", func(e *NewEvent) { e.ThreadKey = strings.Repeat("k", 129) }},
	}
	for _, c := range bad {
		e := ok()
		c.edit(e)
		var p Problems
		e.Check(&p, now)
		if len(p) != 1 || p[0].Path != c.path || p[0].Type != c.typ {
			t.Errorf("%s: got %+v, want one %s problem at %s", c.name, p, c.typ, c.path)
		}
	}
	e := ok()
	e.Priority, e.URL, e.ThreadKey = "5", "https://example.com/pr/1", strings.Repeat("k", 128)
	e.Actions = []Action{{Label: "Open PR", URL: "https://github.com/x/y/pull/1"}, {Label: "Approve", ID: "approve"}, {Label: "Deny", ID: "deny"}}
	var p Problems
	e.Check(&p, now)
	if len(p) != 0 || e.Priority != "urgent" {
		t.Fatalf("a valid event: %+v, priority %q", p, e.Priority)
	}
	ev, err := e.Accept(now)
	if err != nil || ev.Priority != PriorityUrgent || !ev.AsksForAck() {
		t.Fatalf("accepted: %+v, %v", ev, err)
	}
	if a, ok := ev.ActionByID("approve"); !ok || a.Label != "Approve" {
		t.Fatalf("ActionByID: %+v %v", a, ok)
	}
	if _, ok := ev.ActionByID(""); ok {
		t.Fatal("a URL action found by an empty id")
	}
	plain := ok()
	plain.Check(&p, now)
	if plain.Priority != "default" {
		t.Fatalf("no priority: %q", plain.Priority)
	}
}

func TestPriorityWordsAndUrgency(t *testing.T) {
	want := map[string]string{"min": "very-low", "low": "low", "default": "normal", "high": "high", "urgent": "high"}
	for i, w := range []string{"min", "low", "default", "high", "urgent"} {
		p, ok := ParsePriority(w)
		n, ok2 := ParsePriority(string(rune('1' + i)))
		if !ok || !ok2 || p != n || p.String() != w || p.Urgency() != want[w] {
			t.Errorf("%s: %v %v %v %v", w, p, n, ok, ok2)
		}
	}
	if Priority(0).String() != "default" {
		t.Error("an unset priority is default")
	}
}

func TestSearchPriority(t *testing.T) {
	now := time.Now()
	for q, want := range map[string][2]Priority{
		"priority:urgent":   {PriorityUrgent, PriorityUrgent},
		"priority:>=high":   {PriorityHigh, PriorityUrgent},
		"priority:>default": {PriorityHigh, PriorityUrgent},
		"priority:<=low":    {PriorityMin, PriorityLow},
		"priority:<high":    {PriorityMin, PriorityDefault},
		"priority:2":        {PriorityLow, PriorityLow},
	} {
		s, err := ParseSearch(q, now)
		if err != nil || s.MinPriority != want[0] || s.MaxPriority != want[1] || s.Empty() {
			t.Errorf("%s: %+v %v", q, s, err)
		}
	}
	for _, q := range []string{"priority:critical", "priority:>=", "priority:high priority:low"} {
		if _, err := ParseSearch(q, now); ErrorCode(err) != EValidation {
			t.Errorf("%s: %v", q, err)
		}
	}
	s, _ := ParseSearch("tag:priority:p1", now)
	if len(s.Tags) != 1 || s.MinPriority != 0 {
		t.Errorf("tag:priority:p1 is a tag filter: %+v", s)
	}
	var q EventQuery
	s, _ = ParseSearch("priority:>=high", now)
	if !q.AddSearch(s) || !q.Matches(&Event{Priority: PriorityUrgent}) || q.Matches(&Event{Priority: PriorityDefault}) {
		t.Errorf("query %+v", q)
	}
	s, _ = ParseSearch("priority:>urgent", now)
	q = EventQuery{}
	if q.AddSearch(s) {
		t.Error("priority:>urgent can match nothing")
	}
}

func TestHoldsUrgentOnly(t *testing.T) {
	p := &NotifyPrefs{Muted: []string{"a/muted"}, UrgentOnly: []string{"a/ops", "b"}}
	for _, c := range []struct {
		ch       string
		pr       Priority
		project  string
		wantHeld bool
	}{
		{"muted", PriorityUrgent, "a", true},
		{"ops", PriorityHigh, "a", true},
		{"ops", PriorityUrgent, "a", false},
		{"any", PriorityDefault, "b", true},
		{"other", PriorityMin, "a", false},
	} {
		if got := p.Holds(&Event{Project: c.project, Channel: c.ch, Priority: c.pr}); got != c.wantHeld {
			t.Errorf("%+v: held %v", c, got)
		}
	}
}
