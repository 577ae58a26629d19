package web

import (
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

func str(s string) *string { return &s }

// result builds an answer of q with one series per values list (a split by plan when
// there are several).
func result(t *testing.T, p tidings.ChartParams, now time.Time, keys []string, values ...[]string) *tidings.ChartResult {
	t.Helper()
	q, err := tidings.ParseChart(p, now)
	if err != nil {
		t.Fatal(err)
	}
	res := &tidings.ChartResult{Query: q}
	starts := q.Starts()
	for i, vs := range values {
		s := tidings.ChartSeries{}
		if keys != nil {
			s.Key = str(keys[i])
		}
		for j, start := range starts {
			s.Points = append(s.Points, tidings.ChartPoint{Start: start, Value: str(vs[j%len(vs)])})
		}
		res.Series = append(res.Series, s)
	}
	return res
}

var drawNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestDrawChart(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	week := tidings.ChartParams{Project: "p", Q: "channel:payments", Range: "7d"}
	t.Run("bars name their bucket and value", func(t *testing.T) {
		p := drawChart(result(t, week, drawNow, nil, []string{"0", "12", "1"}), "bar", false)
		if p.Empty != "" || len(p.Bars) != 4 { // 7 buckets, 3 of them zero
			t.Fatalf("%d bars, empty %q", len(p.Bars), p.Empty)
		}
		if p.Bars[0].Label != "Wed 25 Nov: 12 events" || p.Bars[1].Label != "Thu 26 Nov: 1 event" {
			t.Fatalf("labels %q, %q", p.Bars[0].Label, p.Bars[1].Label)
		}
		if !strings.Contains(p.Summary, "Events · channel:payments · per day") || !strings.Contains(p.Summary, "total 26") {
			t.Fatalf("summary %q", p.Summary)
		}
		if len(p.Table.Rows) != 7 || p.Table.Rows[1].Cells[0] != "12" || p.Table.Head[0] != "Day" {
			t.Fatalf("table %+v", p.Table)
		}
		if p.Grid[len(p.Grid)-1].Text != "15" {
			t.Fatalf("top gridline %q, want 15", p.Grid[len(p.Grid)-1].Text)
		}
	})
	t.Run("stacked bars stack", func(t *testing.T) {
		p := drawChart(result(t, tidings.ChartParams{Project: "p", Split: "tag:plan", Range: "7d"}, drawNow, []string{"pro", "free"}, []string{"4"}, []string{"6"}), "stacked", true)
		if len(p.Bars) != 14 || len(p.Legend) != 2 || p.Legend[0].Name != "plan pro" {
			t.Fatalf("%d bars, legend %+v", len(p.Bars), p.Legend)
		}
		if p.Grid[len(p.Grid)-1].Text != "10" || p.Bars[0].Label != "Tue 24 Nov · plan pro: 4 events" {
			t.Fatalf("top %q, label %q", p.Grid[len(p.Grid)-1].Text, p.Bars[0].Label)
		}
		if p.Bars[1].Y+p.Bars[1].H > p.Bars[0].Y+0.2 {
			t.Fatalf("the second series is not on top of the first: %+v %+v", p.Bars[0], p.Bars[1])
		}
	})
	t.Run("lines have a point per bucket", func(t *testing.T) {
		p := drawChart(result(t, tidings.ChartParams{Project: "p", Measure: "avg:amount", Range: "7d"}, drawNow, nil, []string{"0.5", "1.25"}), "line", false)
		if len(p.Lines) != 1 || len(p.Lines[0].Dots) != 7 || p.Lines[0].Dots[1].Label != "Wed 25 Nov: 1.25" {
			t.Fatalf("%+v", p.Lines)
		}
		if p.Grid[1].Text != "0.5" {
			t.Fatalf("gridlines %+v", p.Grid)
		}
	})
	t.Run("no data says so", func(t *testing.T) {
		p := drawChart(result(t, week, drawNow, nil, []string{"0"}), "line", false)
		want := "No events match channel:payments from 24 Nov to 30 Nov. Try a longer range or remove a filter."
		if p.Empty != want || len(p.Lines) != 0 || len(p.Grid) != 0 {
			t.Fatalf("empty %q, want %q", p.Empty, want)
		}
	})
	t.Run("hour buckets", func(t *testing.T) {
		p := drawChart(result(t, tidings.ChartParams{Project: "p", Bucket: "hour", Range: "24h"}, drawNow, nil, []string{"3"}), "bar", true)
		if len(p.Bars) != 24 || p.Bars[0].Label != "Sun 29 Nov, 13:00: 3 events" || p.Labels[0].Text != "Sun 29 Nov" {
			t.Fatalf("%d bars, %q, %+v", len(p.Bars), p.Bars[0].Label, p.Labels[0])
		}
	})
}

func TestChartWords(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	q, err := tidings.ParseChart(tidings.ChartParams{Project: "p", Measure: "sum:amount", Q: "channel:payments", Split: "tag:plan", Bucket: "week"}, drawNow)
	if err != nil {
		t.Fatal(err)
	}
	if got := questionWords(q); got != "Sum of amount · channel:payments · by tag plan · per week" {
		t.Fatalf("%q", got)
	}
	for _, c := range []struct {
		now, prev, change, trend string
	}{{"12", "10", "+20 %", "up"}, {"9", "10", "−10 %", "down"}, {"5", "0", "new", "up"}, {"3", "3", "no change", "flat"}, {"10.5", "10", "+5.0 %", "up"}} {
		if ch, tr := changeWords(c.now, c.prev); ch != c.change || tr != c.trend {
			t.Errorf("changeWords(%s, %s) = %q %q, want %q %q", c.now, c.prev, ch, tr, c.change, c.trend)
		}
	}
	for sec, want := range map[int64]string{42: "42 s", 600: "10 min", 12000: "3 h 20 min", 7200: "2 h", 187200: "2 d 4 h"} {
		if got := durationWords(sec); got != want {
			t.Errorf("durationWords(%d) = %q, want %q", sec, got, want)
		}
	}
	res := result(t, tidings.ChartParams{Project: "p", Range: "7d"}, drawNow, []string{"a", "b"}, []string{"1"}, []string{"2"})
	if v, ok := numberOf(res); !ok || v != "21" {
		t.Fatalf("numberOf = %q %v, want 21", v, ok)
	}
}

func TestDrawFunnel(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	q, err := tidings.ParseFunnel(tidings.FunnelParams{Project: "p", Steps: []string{"a", "b", "c"}}, drawNow)
	if err != nil {
		t.Fatal(err)
	}
	med := int64(12000)
	res := &tidings.FunnelResult{Query: q, Steps: []tidings.FunnelStep{
		{Q: "a", Users: 200, Dropped: []string{"u1"}}, {Q: "b", Users: 80, MedianSeconds: &med, Dropped: []string{"u2"}}, {Q: "c", Users: 80, MedianSeconds: &med}}}
	v := drawFunnel(res, func(k int) string { return "/drop?step=" + itoa(k) })
	s := v.Steps[1]
	if s.FromPrev != "40 %" || s.FromFirst != "40 %" || s.Median != "3 h 20 min" || s.Width != 40 || v.Steps[0].Dropped != 120 ||
		v.Steps[0].DropURL != "/drop?step=1" || s.DropURL != "" || v.Steps[2].FromPrev != "100 %" {
		t.Fatalf("%+v", v)
	}
	res.Steps[0].Users = 0
	if v := drawFunnel(res, nil); !strings.HasPrefix(v.Empty, "No user did step 1 (a) from") {
		t.Fatalf("empty %q", v.Empty)
	}
}
