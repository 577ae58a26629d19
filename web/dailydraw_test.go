package web

import (
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func TestUTCDays(t *testing.T) {
	now := time.Date(2026, 11, 25, 23, 59, 0, 0, time.FixedZone("x", -5*3600)) // 26 Nov 04:59 UTC
	days := utcDays(now, tidings.ActivityDays)
	if len(days) != 90 || !days[89].Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)) || !days[0].Equal(time.Date(2026, 8, 29, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("%d days from %v to %v", len(days), days[0], days[len(days)-1])
	}
}

// A daily chart names each day's numbers on its bars, sums them in its summary, lists
// only the days with something, and is drawn for a phone too.
func TestDailyChart(t *testing.T) {
	days := utcDays(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), 7)
	c := dailyChart{Days: days, Stacked: true, What: "Activity of Ada", Empty: "Nothing.", Series: []dailySeries{
		{Name: "Events", Noun: "event", Class: "s0", Values: []int64{0, 1, 0, 0, 0, 0, 2}},
		{Name: "Page views", Noun: "page view", Class: "s2", Values: []int64{0, 3, 0, 0, 0, 0, 1}},
	}}
	d := c.draw()
	if d.Wide.Width != int(plotWideW) || d.Narrow.Width != int(plotNarrowW) {
		t.Fatalf("widths %d and %d", d.Wide.Width, d.Narrow.Width)
	}
	p := d.Wide
	if len(p.Bars) != 4 {
		t.Fatalf("%d bars, want 4 (a day's parts stacked, none for 0)", len(p.Bars))
	}
	if p.Bars[0].Label != "Fri 20 Nov 2026: 1 event, 3 page views" {
		t.Fatalf("bar label %q", p.Bars[0].Label)
	}
	// Stacked: the page views' bar sits on the events' one.
	if ev, pv := p.Bars[0], p.Bars[1]; pv.Y+pv.H > ev.Y+0.2 || pv.X != ev.X {
		t.Fatalf("not stacked: %+v %+v", ev, pv)
	}
	for _, want := range []string{"Activity of Ada, per day (UTC), from 19 Nov to 25 Nov", "Events: total 3, most 2 events on Wed 25 Nov 2026", "Page views: total 4, most 3 page views on Fri 20 Nov 2026"} {
		if !strings.Contains(p.Summary, want) {
			t.Fatalf("summary %q lacks %q", p.Summary, want)
		}
	}
	if len(p.Table.Rows) != 2 || p.Table.Rows[1].Cells[0] != "2" {
		t.Fatalf("table %+v", p.Table)
	}
	// Nothing at all: the words, no picture.
	for i := range c.Series {
		c.Series[i].Values = make([]int64, 7)
	}
	if d := c.draw(); d.Wide.Empty != "Nothing." || len(d.Wide.Bars) != 0 {
		t.Fatalf("empty chart: %+v", d.Wide)
	}
}

// A year is labelled by month, fewer on a phone; the users' line is a line.
func TestDailyChartYear(t *testing.T) {
	days := utcDays(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), 365)
	views, users := make([]int64, 365), make([]int64, 365)
	views[100], users[100] = 7, 2
	c := dailyChart{Days: days, What: "Pages", Series: []dailySeries{{Name: "Page views", Noun: "page view", Class: "s0", Values: views},
		{Name: "Unique users", Noun: "user", Class: "s1", Values: users, Line: true}}}
	d := c.draw()
	var texts []string
	for _, l := range d.Wide.Labels {
		texts = append(texts, l.Text)
	}
	if got := strings.Join(texts, " "); got != "Dec 2025 Jan 2026 Feb Mar Apr May Jun Jul Aug Sep Oct Nov" {
		t.Fatalf("wide labels %q", got)
	}
	if n := len(d.Narrow.Labels); n != 4 {
		t.Fatalf("%d narrow labels, want 4", n)
	}
	if len(d.Wide.Lines) != 1 || len(d.Wide.Lines[0].Dots) != 0 || strings.Count(d.Wide.Lines[0].Points, ",") != 365 {
		t.Fatalf("users' line: %d lines", len(d.Wide.Lines))
	}
	if len(d.Wide.Bars) != 1 || !strings.Contains(d.Wide.Bars[0].Label, "7 page views, 2 users") {
		t.Fatalf("bars %+v", d.Wide.Bars)
	}
}

func TestPersonOf(t *testing.T) {
	tag := func(k, v string) tidings.Tag { return tidings.Tag{Key: k, Kind: tidings.KindString, Value: v} }
	for _, c := range []struct {
		id            string
		props         tidings.Tags
		name, letters string
		named         bool
	}{
		{"u-1", tidings.Tags{tag("email", "ada@example.com"), tag("name", " Ada King Lovelace ")}, "Ada King Lovelace", "AL", true},
		{"u-2", tidings.Tags{tag("email", "grace.hopper@navy.example")}, "grace.hopper@navy.example", "GH", true},
		{"user-42", tidings.Tags{tag("plan", "pro")}, "user-42", "U", false},
		{"-._42", nil, "-._42", "4", false},
		{"élodie", tidings.Tags{tag("name", "  ")}, "élodie", "É", false},
		{"x", tidings.Tags{tag("name", "李小龙")}, "李小龙", "李", true},
	} {
		p := personOf(c.id, c.props)
		if p.Name != c.name || p.Initials != c.letters || p.Named != c.named {
			t.Errorf("%s: %+v, want %q %q %v", c.id, p, c.name, c.letters, c.named)
		}
		if p.Colour != personOf(c.id, nil).Colour || !strings.HasPrefix(p.Colour, "av") {
			t.Errorf("%s: the colour %q is not the ID's", c.id, p.Colour)
		}
	}
	seen := map[string]bool{}
	for i := range 200 {
		seen[avatarClass("user-"+itoa(i))] = true
	}
	if len(seen) != avatarColours {
		t.Fatalf("%d colours used of %d", len(seen), avatarColours)
	}
	long := personOf("u", tidings.Tags{tag("name", strings.Repeat("é", 100))})
	if r := []rune(long.Short()); len(r) != maxNameRunes || r[len(r)-1] != '…' {
		t.Fatalf("short name of %d runes", len(r))
	}
}
