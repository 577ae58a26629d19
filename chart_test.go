package tidings

import (
	"strings"
	"testing"
	"time"
)

func TestParseChartRefuses(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		p     ChartParams
		field string
		says  string
	}{
		{ChartParams{Measure: "median"}, "measure", "count, users, or sum:KEY"},
		{ChartParams{Measure: "sum:"}, "measure", "sum:KEY"},
		{ChartParams{Measure: "count:x"}, "measure", "count"},
		{ChartParams{Bucket: "minute"}, "bucket", "hour, day, week, month"},
		{ChartParams{Split: "user"}, "split", "channel, or tag:KEY"},
		{ChartParams{Split: "tag:"}, "split", "tag:KEY"},
		{ChartParams{TZ: "Mars/Olympus"}, "tz", "IANA"},
		{ChartParams{Range: "2y"}, "range", "24h, 7d, 30d, 90d, 12m"},
		{ChartParams{From: "yesterday"}, "from", "RFC 3339"},
		{ChartParams{From: "2026-11-20", To: "2026-11-10"}, "to", "after from"},
		{ChartParams{From: "2026-11-20T00:00:00Z", To: "2026-11-20T00:00:00Z"}, "to", "after from"},
		{ChartParams{Bucket: "hour", From: "2025-11-01", To: "2026-11-01"}, "bucket", "hour buckets cover at most 33 days"},
		{ChartParams{Bucket: "day", From: "2020-01-01", To: "2026-11-01"}, "from", "at most 5 years"},
		{ChartParams{Bucket: "day", From: "2023-01-01", To: "2026-11-01"}, "bucket", "week or month"},
		{ChartParams{Q: "since:soon"}, "q", "since"},
		{ChartParams{Q: "channel:a channel:b"}, "q", "at most one channel"},
		{ChartParams{Q: "tag:user"}, "q", "tag:KEY:VALUE"},
	}
	for _, c := range cases {
		_, err := ParseChart(c.p, now)
		e, ok := err.(*Error)
		if !ok || e.Code != EValidation {
			t.Errorf("%+v: %v, want a validation error", c.p, err)
			continue
		}
		found := false
		for _, f := range e.Fields {
			if f.Path == c.field && strings.Contains(f.Message, c.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v: %+v, want field %s saying %q", c.p, e.Fields, c.field, c.says)
		}
	}
}

func TestChartBucketsAcrossDaylightSaving(t *testing.T) {
	now := time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	q, err := ParseChart(ChartParams{TZ: "Europe/Paris", From: "2026-10-24", To: "2026-10-27"}, now)
	if err != nil {
		t.Fatal(err)
	}
	starts := q.Starts()
	if len(starts) != 3 {
		t.Fatalf("%d days: %v", len(starts), starts)
	}
	for i, want := range []string{"2026-10-24T00:00:00+02:00", "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00"} {
		if got := starts[i].Format(time.RFC3339); got != want {
			t.Errorf("day %d starts %s, want %s", i, got, want)
		}
	}
	if from, to := q.Span(starts[1]); to.Sub(from) != 25*time.Hour {
		t.Errorf("the day summer time ends lasts %v", to.Sub(from))
	}
	// Hours in a zone half an hour off UTC start on the half hour; weeks on Monday;
	// months on the first.
	q, _ = ParseChart(ChartParams{TZ: "Asia/Kolkata", Bucket: "hour", From: "2026-11-01T10:00:00Z", To: "2026-11-01T12:00:00Z"}, now)
	if got := q.Starts()[0].UTC().Format("15:04"); got != "09:30" {
		t.Errorf("Kolkata's hour starts at %s UTC", got)
	}
	q, _ = ParseChart(ChartParams{Bucket: "week", From: "2026-11-04", To: "2026-11-20"}, now)
	if got := q.Starts()[0]; got.Weekday() != time.Monday || got.Day() != 2 {
		t.Errorf("the week of 4 Nov starts %v", got)
	}
	q, _ = ParseChart(ChartParams{Bucket: "month", TZ: "America/New_York", Range: "12m"}, now)
	if s := q.Starts(); len(s) != 12 || s[0].Format("2006-01-02") != "2025-12-01" || s[11].Month() != time.November {
		t.Errorf("12 months: %v", s)
	}
	// The default: the last 30 days, whole days, today included.
	q, _ = ParseChart(ChartParams{}, now)
	if s := q.Starts(); len(s) != 30 || !q.To.Equal(time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("default: %d days to %v", len(s), q.To)
	}
}

func TestParseFunnelRefuses(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	nine := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	cases := []struct {
		p     FunnelParams
		field string
		says  string
	}{
		{FunnelParams{Steps: []string{"a"}}, "step", "2 to 8 steps (got 1)"},
		{FunnelParams{Steps: nine}, "step", "2 to 8 steps (got 9)"},
		{FunnelParams{Steps: []string{"a", ""}}, "step[1]", "a step is a search"},
		{FunnelParams{Steps: []string{"a", "since:x"}}, "step[1]", "since"},
		{FunnelParams{Steps: []string{"a", "b"}, Window: "30m"}, "window", "1h to 90d"},
		{FunnelParams{Steps: []string{"a", "b"}, Window: "91d"}, "window", "1h to 90d"},
		{FunnelParams{Steps: []string{"a", "b"}, Window: "soon"}, "window", "1h to 90d"},
		{FunnelParams{Steps: []string{"a", "b"}, From: "2026-11-20", To: "2026-11-01"}, "to", "after from"},
		{FunnelParams{Steps: []string{"a", "b"}, From: "2024-01-01", To: "2026-11-01"}, "from", "at most 366 days"},
	}
	for _, c := range cases {
		_, err := ParseFunnel(c.p, now)
		e, ok := err.(*Error)
		if !ok || e.Code != EValidation {
			t.Errorf("%+v: %v, want a validation error", c.p, err)
			continue
		}
		found := false
		for _, f := range e.Fields {
			if f.Path == c.field && strings.Contains(f.Message, c.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v: %+v, want field %s saying %q", c.p, e.Fields, c.field, c.says)
		}
	}
	q, err := ParseFunnel(FunnelParams{Steps: []string{`event:"Signed up"`, "channel:payments"}, Window: "2w"}, now)
	if err != nil || q.Window != 14*24*time.Hour || WindowText(q.Window) != "14d" || q.Searches[0].Event != "Signed up" {
		t.Fatalf("%+v %v", q, err)
	}
}

func TestSearchFields(t *testing.T) {
	s, err := ParseSearch(`channel:payments event:"Signed up" user:ada tag:user:bob plan:pro paid`, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if s.Channel != "payments" || s.Event != "Signed up" || s.User != "ada" || len(s.Tags) != 2 ||
		s.Tags[0] != (Tag{Key: "user", Value: "bob"}) || s.Tags[1] != (Tag{Key: "plan", Value: "pro"}) || len(s.Terms) != 1 {
		t.Fatalf("%+v", s)
	}
	q := EventQuery{Channel: "payments"}
	if !q.AddSearch(s) || q.Event != "Signed up" || len(q.Users) != 1 {
		t.Fatalf("%+v", q)
	}
	q = EventQuery{Channel: "signups"}
	if q.AddSearch(s) {
		t.Fatal("a search for channel payments on channel signups's page can match")
	}
	ev := &Event{Channel: "payments", Event: "Signed up", UserID: "ada", Tags: Tags{{Key: "user", Value: "bob"}, {Key: "plan", Value: "pro"}}, Description: "paid"}
	q = EventQuery{}
	q.AddSearch(s)
	if !q.Matches(ev) {
		t.Fatal("the event does not match its own search")
	}
	ev.Event = "signed up"
	if q.Matches(ev) {
		t.Fatal("event: is not case-sensitive")
	}
}
