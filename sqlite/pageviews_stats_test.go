package sqlite

import (
	"testing"
	"time"
)

// pathSpans covers each day of a range once and no other: its months' rows less the
// days taken away, plus the days read. Ranges start on every day of 2024-2026 (leap
// February, months of 28 to 31 days) and last 1 to MaxPageStatsDays days; the rows read
// stay bounded.
func TestPathSpans(t *testing.T) {
	t.Parallel()
	first := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400
	last := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC).Unix() / 86400
	for _, n := range []int64{1, 2, 15, 27, 28, 29, 30, 31, 32, 45, 59, 60, 61, 62, 89, 90, 91, 180, 365, 366} {
		for from := first; from <= last; from++ {
			to := from + n
			spans := pathSpans(from, to)
			var cost int64 // rows read per path, a month's as monthRowsCost days'
			for _, s := range spans {
				if s.from >= s.to {
					t.Fatalf("[%d, %d): an empty span %+v", from, to, s)
				}
				if s.months {
					if monthOf(s.from) != s.from || monthOf(s.to) != s.to {
						t.Fatalf("[%d, %d): months %+v not from a month's first day to another's", from, to, s)
					}
					for m := s.from; m < s.to; m = monthOf(m + 31) {
						cost += monthRowsCost
					}
				} else {
					cost += s.to - s.from
				}
			}
			// Each day in a window around the range counts once inside, never outside.
			for d := monthOf(from) - 40; d < to+40; d++ {
				var k int64
				for _, s := range spans {
					at := d
					if s.months {
						at = monthOf(d)
					}
					if at >= s.from && at < s.to {
						if s.sub {
							k--
						} else {
							k++
						}
					}
				}
				want := int64(0)
				if d >= from && d < to {
					want = 1
				}
				if k != want {
					t.Fatalf("[%d, %d) by %+v: day %d counted %d times, want %d", from, to, spans, d, k, want)
				}
			}
			// At most half a month's days at each end, and the months between.
			if limit := min(n, 2*(15+monthRowsCost)+monthRowsCost*(n/28+1)); cost > limit {
				t.Fatalf("[%d, %d) by %+v: %d rows a path, want at most %d", from, to, spans, cost, limit)
			}
		}
	}
}

func TestMonthOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ day, month time.Time }{
		{time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if got := monthOf(c.day.Unix() / 86400); got != c.month.Unix()/86400 {
			t.Errorf("monthOf(%s) = %s, want %s", c.day.Format(time.DateOnly), time.Unix(got*86400, 0).UTC().Format(time.DateOnly), c.month.Format(time.DateOnly))
		}
	}
}
