package tidings

import (
	"testing"
	"time"
)

// TestDigestPeriod: the period a digest sent at a time covers, in the member's zone:
// daily, the day that ended at the latest 08:00; weekly, the week that ended at the
// latest Monday 08:00 — before and after the hour and the Monday, and in Berlin across
// both changes of daylight saving time, where a day is 23 or 25 hours long.
func TestDigestPeriod(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, berlin) }
	eight := func(y int, m time.Month, d int) time.Time { return at(y, m, d, DigestHour, 0) }
	utc8 := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, DigestHour, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		name     string
		every    string
		now      time.Time
		loc      *time.Location
		from, to time.Time
		hours    float64 // the period's length
	}{
		// Tuesday 24 November 2026, standard time (CET).
		{"daily before 08:00", DigestDaily, at(2026, 11, 24, 7, 59), berlin, eight(2026, 11, 22), eight(2026, 11, 23), 24},
		{"daily at 08:00", DigestDaily, eight(2026, 11, 24), berlin, eight(2026, 11, 23), eight(2026, 11, 24), 24},
		{"daily in the evening", DigestDaily, at(2026, 11, 24, 23, 30), berlin, eight(2026, 11, 23), eight(2026, 11, 24), 24},
		{"daily: the member's zone, not the clock's", DigestDaily, at(2026, 11, 24, 8, 30).UTC(), berlin, eight(2026, 11, 23), eight(2026, 11, 24), 24},
		{"daily in UTC, before its 08:00", DigestDaily, at(2026, 11, 24, 8, 30), time.UTC, utc8(2026, 11, 22), utc8(2026, 11, 23), 24}, // 07:30 UTC
		{"daily in UTC", DigestDaily, at(2026, 11, 24, 9, 0), time.UTC, utc8(2026, 11, 23), utc8(2026, 11, 24), 24},
		{"daily across a month and a year", DigestDaily, at(2027, 1, 1, 7, 0), berlin, eight(2026, 12, 30), eight(2026, 12, 31), 24},
		{"weekly on Monday before 08:00", DigestWeekly, at(2026, 11, 23, 7, 59), berlin, eight(2026, 11, 9), eight(2026, 11, 16), 168},
		{"weekly on Monday at 08:00", DigestWeekly, eight(2026, 11, 23), berlin, eight(2026, 11, 16), eight(2026, 11, 23), 168},
		{"weekly on Tuesday", DigestWeekly, at(2026, 11, 24, 7, 0), berlin, eight(2026, 11, 16), eight(2026, 11, 23), 168},
		{"weekly on Sunday night", DigestWeekly, at(2026, 11, 29, 23, 59), berlin, eight(2026, 11, 16), eight(2026, 11, 23), 168},
		// Summer time begins on Sunday 29 March 2026 at 02:00 (to 03:00).
		{"daily: the day of 23 hours", DigestDaily, at(2026, 3, 29, 9, 0), berlin, eight(2026, 3, 28), eight(2026, 3, 29), 23},
		{"daily before the change", DigestDaily, at(2026, 3, 29, 1, 30), berlin, eight(2026, 3, 27), eight(2026, 3, 28), 24},
		{"daily after the change, before 08:00", DigestDaily, at(2026, 3, 29, 7, 59), berlin, eight(2026, 3, 27), eight(2026, 3, 28), 24},
		{"daily the day after", DigestDaily, eight(2026, 3, 30), berlin, eight(2026, 3, 29), eight(2026, 3, 30), 24},
		{"weekly: the week of 167 hours", DigestWeekly, eight(2026, 3, 30), berlin, eight(2026, 3, 23), eight(2026, 3, 30), 167},
		{"weekly: Monday after the change, before 08:00", DigestWeekly, at(2026, 3, 30, 7, 59), berlin, eight(2026, 3, 16), eight(2026, 3, 23), 168},
		// Summer time ends on Sunday 25 October 2026 at 03:00 (to 02:00).
		{"daily: the day of 25 hours", DigestDaily, eight(2026, 10, 25), berlin, eight(2026, 10, 24), eight(2026, 10, 25), 25},
		{"daily: 02:30 summer time", DigestDaily, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), berlin, eight(2026, 10, 23), eight(2026, 10, 24), 24},
		{"daily: 02:30 winter time", DigestDaily, time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), berlin, eight(2026, 10, 23), eight(2026, 10, 24), 24},
		{"weekly: the week of 169 hours", DigestWeekly, at(2026, 10, 26, 9, 0), berlin, eight(2026, 10, 19), eight(2026, 10, 26), 169},
		{"weekly: the Sunday of the change", DigestWeekly, at(2026, 10, 25, 12, 0), berlin, eight(2026, 10, 12), eight(2026, 10, 19), 168},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, to := DigestPeriod(c.every, c.now, c.loc)
			if !from.Equal(c.from) || !to.Equal(c.to) {
				t.Fatalf("DigestPeriod(%s, %v) = [%v, %v), want [%v, %v)", c.every, c.now.In(c.loc), from, to, c.from, c.to)
			}
			if h := to.Sub(from).Hours(); h != c.hours {
				t.Fatalf("the period is %v hours long, want %v", h, c.hours)
			}
			if l := to.In(c.loc); l.Hour() != DigestHour || l.Minute() != 0 || c.every == DigestWeekly && l.Weekday() != time.Monday {
				t.Fatalf("the period ends at %v", l)
			}
		})
	}
}
