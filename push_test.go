package tidings

import (
	"testing"
	"time"
)

func TestQuietUntil(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := func(h, m int) time.Time { return time.Date(2026, 11, 22, h, m, 0, 0, berlin) }
	night := &NotifyPrefs{QuietStart: 22 * 60, QuietEnd: 7 * 60, TimeZone: "Europe/Berlin"}
	lunch := &NotifyPrefs{QuietStart: 12 * 60, QuietEnd: 13 * 60, TimeZone: "Europe/Berlin"}
	for _, c := range []struct {
		p     *NotifyPrefs
		now   time.Time
		quiet bool
		until time.Time
	}{
		{night, at(23, 30), true, time.Date(2026, 11, 23, 7, 0, 0, 0, berlin)},
		{night, at(6, 59), true, at(7, 0)},
		{night, at(7, 0), false, time.Time{}},
		{night, at(21, 59), false, time.Time{}},
		{lunch, at(12, 30), true, at(13, 0)},
		{lunch, at(13, 0), false, time.Time{}},
		{&NotifyPrefs{}, at(3, 0), false, time.Time{}},
		{night, at(23, 30).UTC(), true, time.Date(2026, 11, 23, 7, 0, 0, 0, berlin)}, // the zone is the user's, not the server's
	} {
		until, quiet := c.p.QuietUntil(c.now)
		if quiet != c.quiet || !until.Equal(c.until) {
			t.Errorf("%+v at %v: %v %v, want %v %v", c.p, c.now, quiet, until, c.quiet, c.until)
		}
	}
}

func TestMutes(t *testing.T) {
	p := &NotifyPrefs{Muted: []string{"ops", "my-saas/deploys"}}
	for _, c := range []struct {
		project, channel string
		want             bool
	}{{"ops", "anything", true}, {"my-saas", "deploys", true}, {"my-saas", "payments", false}, {"my", "saas/deploys", false}} {
		if got := p.Mutes(c.project, c.channel); got != c.want {
			t.Errorf("Mutes(%s, %s) = %v", c.project, c.channel, got)
		}
	}
}
