package web

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// A board's chart is drawn here, on the server, as inline SVG: pure functions from a
// tidings.ChartResult to what the "plot" template writes. Every bar and point names
// its bucket and value in an SVG <title> (shown on hover), the picture has an
// aria-label summary, and the same numbers are in a table for screen readers.

// plot is a drawn chart.
type plot struct {
	Display string // line, bar, stacked, number, table
	Width   int
	Height  int
	Left    float64 // where the plot area starts: the y-axis values are left of it
	AxisX   float64
	LabelY  float64 // the baseline of the x-axis labels
	Grid    []gridLine
	Labels  []axisLabel
	Bars    []plotBar
	Lines   []plotLine
	Legend  []legendItem
	Summary string // the aria-label
	Table   plotTable
	Number  *plotNumber
	Empty   string // said instead of an empty picture
}

type plotBar struct {
	X, Y, W, H float64
	Class      string
	Label      string
}

type plotLine struct {
	Points string
	Class  string
	Dots   []plotDot
}

type plotDot struct {
	X, Y  float64
	Label string
}

type legendItem struct{ Name, Class string }

type plotTable struct {
	Head []string
	Rows []plotRow
}

type plotRow struct {
	Label string
	Cells []string
}

// plotNumber is the single-number display: the range's value and its change against
// the period of the same length just before.
type plotNumber struct {
	Value  string
	Prev   string // "" when unknown
	Change string // "+12 %", "−3 %", "new", ""
	Trend  string // up, down, flat
}

// plotSize is a card's picture: wide cards have more room for labels.
const (
	plotNarrowW = 440.0
	plotWideW   = 860.0
	plotH       = 180.0
	plotTop     = 10.0
)

// IsWide reports whether the picture is drawn at a wide card's width: a phone shows
// it at the width of a narrow one, so its labels are drawn larger there (app.css).
func (p plot) IsWide() bool { return p.Width > int(plotNarrowW) }

// seriesName names a series in a legend, a table's header and a hover.
func seriesName(q *tidings.ChartQuery, s tidings.ChartSeries) string {
	switch {
	case s.Other:
		return "Other"
	case s.Key == nil:
		return measureWords(q)
	case q.Split == "channel":
		return "#" + *s.Key
	case *s.Key == "":
		return q.SplitBy + " (empty)"
	}
	return q.SplitBy + " " + *s.Key
}

// measureWords is what is counted: "Events", "Unique users", "Sum of amount".
func measureWords(q *tidings.ChartQuery) string {
	switch q.Measure {
	case "count":
		return "Events"
	case "users":
		return "Unique users"
	}
	return map[string]string{"sum": "Sum", "avg": "Average", "min": "Minimum", "max": "Maximum"}[q.Measure] + " of " + q.Key
}

// questionWords is a chart's question in words: "Events · channel:payments · by tag
// plan · per day".
func questionWords(q *tidings.ChartQuery) string {
	parts := []string{measureWords(q)}
	if strings.TrimSpace(q.Q) != "" {
		parts = append(parts, strings.TrimSpace(q.Q))
	} else {
		parts = append(parts, "all events")
	}
	switch q.Split {
	case "channel":
		parts = append(parts, "by channel")
	case "tag":
		parts = append(parts, "by tag "+q.SplitBy)
	}
	return strings.Join(append(parts, "per "+q.Bucket), " · ")
}

// valueWords is a value with its unit: "12 events", "1 user", "340.5".
func valueWords(q *tidings.ChartQuery, v *string) string {
	if v == nil {
		return "no value"
	}
	switch q.Measure {
	case "count":
		return pluralText(*v, "event")
	case "users":
		return pluralText(*v, "user")
	}
	return *v
}

func pluralText(v, noun string) string {
	if v == "1" {
		return "1 " + noun
	}
	return v + " " + noun + "s"
}

// bucketWords names a bucket in full, for hovers and tables.
func bucketWords(bucket string, t time.Time) string {
	switch bucket {
	case "hour":
		return t.Format("Mon 2 Jan, 15:00")
	case "week":
		return "Week of " + t.Format("Mon 2 Jan 2006")
	case "month":
		return t.Format("January 2006")
	}
	return t.Format("Mon 2 Jan")
}

// bucketAxis is a bucket's short label on the x-axis.
func bucketAxis(bucket string, t time.Time, first bool) string {
	switch bucket {
	case "hour":
		if t.Hour() == 0 || first {
			return t.Format("Mon 2 Jan")
		}
		return t.Format("15:00")
	case "month":
		if t.Month() == time.January || first {
			return t.Format("Jan 2006")
		}
		return t.Format("Jan")
	}
	return t.Format("2 Jan")
}

// rangeWords is "from 1 Nov to 30 Nov" (To is exclusive: its last day is the day before).
func rangeWords(from, to time.Time) string {
	last := to.Add(-time.Nanosecond)
	layout := "2 Jan"
	if from.Year() != last.Year() {
		layout = "2 Jan 2006"
	}
	if to.Sub(from) <= 48*time.Hour {
		return "from " + from.Format("2 Jan 15:04") + " to " + to.Format("2 Jan 15:04")
	}
	return "from " + from.Format(layout) + " to " + last.Format(layout)
}

// emptyWords says that a chart has no data, its question and what to change.
func emptyWords(q *tidings.ChartQuery) string {
	what := "No events"
	switch q.Measure {
	case "users":
		what = "No events with a user_id"
	case "sum", "avg", "min", "max":
		what = "No events with a number tag " + q.Key
	}
	filter := strings.TrimSpace(q.Q)
	if filter != "" {
		what += " match " + filter
	}
	hint := "Try a longer range."
	if filter != "" {
		hint = "Try a longer range or remove a filter."
	}
	return what + " " + rangeWords(q.From.In(q.Loc), q.To.In(q.Loc)) + ". " + hint
}

func parseValue(v *string) (float64, bool) {
	if v == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(*v, 64)
	return f, err == nil
}

// niceStepF is the gridline interval for a span: 1, 2 or 5 times a power of ten, so
// that at most four intervals cover it.
func niceStepF(span float64) float64 {
	if span <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(span/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*p) <= 4.0000001 {
			return m * p
		}
	}
	return 10 * p
}

// countLike measures count whole things: their axis has whole steps.
func countLike(q *tidings.ChartQuery) bool { return q.Measure == "count" || q.Measure == "users" }

// formatTick writes a gridline's value without float noise.
func formatTick(v, step float64) string {
	prec := 0
	if step < 1 {
		prec = int(math.Ceil(-math.Log10(step)))
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "-0" {
		s = "0"
	}
	if math.Abs(v) >= 10000 && prec == 0 {
		return shortNumber(v)
	}
	return s
}

// shortNumber is 12k, 3.4M.
func shortNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// drawChart lays a chart's answer out for its display, wide or narrow.
func drawChart(res *tidings.ChartResult, display string, wide bool) plot {
	q := res.Query
	p := plot{Display: display, Width: int(plotNarrowW), Height: int(plotH) + 26, LabelY: plotH + 20}
	if wide {
		p.Width = int(plotWideW)
	}
	starts := q.Starts()
	p.Table = chartTable(res)
	for _, s := range res.Series {
		p.Legend = append(p.Legend, legendItem{Name: seriesName(q, s), Class: seriesClass(s, len(p.Legend))})
	}
	if len(p.Legend) == 1 {
		p.Legend = nil // one series: the title says what it is
	}
	any := false
	for _, s := range res.Series {
		for _, pt := range s.Points {
			if f, ok := parseValue(pt.Value); ok && f != 0 {
				any = true
			}
		}
	}
	if !any || len(starts) == 0 {
		p.Empty = emptyWords(q)
		return p
	}
	switch display {
	case "number", "table":
		return p
	}
	// The value range: stacked bars stack, the others stand side by side.
	lo, hi := 0.0, 0.0
	for i := range starts {
		pos, neg := 0.0, 0.0
		for _, s := range res.Series {
			if i >= len(s.Points) {
				continue
			}
			f, _ := parseValue(s.Points[i].Value)
			if display == "stacked" {
				if f > 0 {
					pos += f
				} else {
					neg += f
				}
			} else {
				hi, lo = math.Max(hi, f), math.Min(lo, f)
			}
		}
		hi, lo = math.Max(hi, pos), math.Min(lo, neg)
	}
	step := niceStepF(hi - lo)
	if countLike(q) && step < 1 {
		step = 1
	}
	top := math.Ceil(hi/step) * step
	bottom := math.Floor(lo/step) * step
	if top == bottom {
		top = bottom + step
	}
	plotW := float64(p.Width)
	p.Left = 12 + 7*float64(len(formatTick(top, step))+1)
	if l := 12 + 7*float64(len(formatTick(bottom, step))+1); l > p.Left {
		p.Left = l
	}
	p.AxisX = p.Left - 6
	y := func(v float64) float64 { return plotH - (v-bottom)/(top-bottom)*(plotH-plotTop) }
	for v := bottom; v <= top+step/2; v += step {
		p.Grid = append(p.Grid, gridLine{Y: round1(y(v)), Text: formatTick(v, step)})
	}
	n := len(starts)
	slot := (plotW - p.Left) / float64(n)
	every := int(math.Ceil(float64(n) / (plotW / 90)))
	for i, t := range starts {
		if i%max(every, 1) != 0 {
			continue
		}
		l := axisLabel{X: round1(p.Left + float64(i)*slot + slot/2), Text: bucketAxis(q.Bucket, t, i == 0), Anchor: "middle", Minor: (i/max(every, 1))%2 == 1}
		if i == 0 {
			l.X, l.Anchor = p.Left, "start"
		}
		p.Labels = append(p.Labels, l)
	}
	endLabel(p.Labels, plotW)
	switch display {
	case "line":
		for si, s := range res.Series {
			line := plotLine{Class: seriesClass(s, si)}
			var pts []string
			for i, pt := range s.Points {
				f, ok := parseValue(pt.Value)
				x := round1(p.Left + float64(i)*slot + slot/2)
				label := hoverWords(q, s, pt, len(res.Series) > 1)
				if !ok {
					continue
				}
				yy := round1(y(f))
				pts = append(pts, ftoa(x)+","+ftoa(yy))
				line.Dots = append(line.Dots, plotDot{X: x, Y: yy, Label: label})
			}
			line.Points = strings.Join(pts, " ")
			p.Lines = append(p.Lines, line)
		}
	case "stacked":
		for i := range starts {
			pos, neg := 0.0, 0.0
			for si, s := range res.Series {
				f, ok := parseValue(s.Points[i].Value)
				if !ok || f == 0 {
					continue
				}
				var y0, y1 float64
				if f > 0 {
					y0, y1 = y(pos), y(pos+f)
					pos += f
				} else {
					y0, y1 = y(neg+f), y(neg)
					neg += f
				}
				h := math.Abs(y0 - y1)
				p.Bars = append(p.Bars, plotBar{X: round1(p.Left + float64(i)*slot + slot*0.1), W: round1(slot * 0.8),
					Y: round1(math.Min(y0, y1)), H: round1(math.Max(h, 0.5)), Class: seriesClass(s, si),
					Label: hoverWords(q, s, s.Points[i], len(res.Series) > 1)})
			}
		}
	default: // bar: the series side by side in each bucket
		k := float64(len(res.Series))
		for si, s := range res.Series {
			for i, pt := range s.Points {
				f, ok := parseValue(pt.Value)
				if !ok || f == 0 {
					continue
				}
				w := slot * 0.8 / k
				y0, y1 := y(0), y(f)
				h := math.Abs(y0 - y1)
				if h < 2 {
					h = 2
					if f > 0 {
						y1 = y0 - 2
					}
				}
				p.Bars = append(p.Bars, plotBar{X: round1(p.Left + float64(i)*slot + slot*0.1 + float64(si)*w), W: round1(w),
					Y: round1(math.Min(y0, y1)), H: round1(h), Class: seriesClass(s, si), Label: hoverWords(q, s, pt, len(res.Series) > 1)})
			}
		}
	}
	p.Summary = summaryWords(res)
	return p
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// seriesClass is a series' colour: s0 to s9 by place, "other" for the rest.
func seriesClass(s tidings.ChartSeries, i int) string {
	if s.Other {
		return "s-other"
	}
	return "s" + strconv.Itoa(i%10)
}

// hoverWords names a point: "Mon 2 Nov: 12 events", "Mon 2 Nov · plan pro: 3 events".
func hoverWords(q *tidings.ChartQuery, s tidings.ChartSeries, pt tidings.ChartPoint, named bool) string {
	b := bucketWords(q.Bucket, pt.Start.In(q.Loc))
	if named {
		b += " · " + seriesName(q, s)
	}
	return b + ": " + valueWords(q, pt.Value)
}

// summaryWords is the picture's aria-label: the question, the total or range of
// values, and the highest bucket.
func summaryWords(res *tidings.ChartResult) string {
	q := res.Query
	var b strings.Builder
	b.WriteString(questionWords(q) + ", " + rangeWords(q.From.In(q.Loc), q.To.In(q.Loc)))
	for _, s := range res.Series {
		best, bestAt := math.Inf(-1), -1
		for i, pt := range s.Points {
			if f, ok := parseValue(pt.Value); ok && f > best {
				best, bestAt = f, i
			}
		}
		if bestAt < 0 {
			continue
		}
		b.WriteString(". ")
		if len(res.Series) > 1 {
			b.WriteString(seriesName(q, s) + ": ")
		}
		if q.Measure == "count" || q.Measure == "sum" {
			b.WriteString("total " + totalOf(s) + ", ")
		}
		b.WriteString("highest " + valueWords(q, s.Points[bestAt].Value) + " on " + bucketWords(q.Bucket, s.Points[bestAt].Start.In(q.Loc)))
	}
	b.WriteString(". The numbers are in the table below.")
	return b.String()
}

// totalOf adds a series' values up, exactly when they are whole numbers.
func totalOf(s tidings.ChartSeries) string {
	var whole int64
	var f float64
	exact := true
	for _, pt := range s.Points {
		if pt.Value == nil {
			continue
		}
		if n, err := strconv.ParseInt(*pt.Value, 10, 64); err == nil && exact {
			whole += n
		} else {
			exact = false
		}
		v, _ := strconv.ParseFloat(*pt.Value, 64)
		f += v
	}
	if exact {
		return strconv.FormatInt(whole, 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// chartTable is the numbers of a chart: a row per bucket, a column per series.
func chartTable(res *tidings.ChartResult) plotTable {
	q := res.Query
	t := plotTable{Head: []string{map[string]string{"hour": "Hour", "day": "Day", "week": "Week", "month": "Month"}[q.Bucket]}}
	for _, s := range res.Series {
		t.Head = append(t.Head, seriesName(q, s))
	}
	for i, start := range q.Starts() {
		row := plotRow{Label: bucketWords(q.Bucket, start.In(q.Loc))}
		for _, s := range res.Series {
			cell := "—"
			if i < len(s.Points) && s.Points[i].Value != nil {
				cell = *s.Points[i].Value
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// numberOf is the single number of a chart over its range, when its buckets add up
// to it (count, sum) or bound it (min, max); ok is false for users and averages,
// which a caller computes over the whole range.
func numberOf(res *tidings.ChartResult) (string, bool) {
	q := res.Query
	switch q.Measure {
	case "count", "sum":
		var all tidings.ChartSeries
		for _, s := range res.Series {
			all.Points = append(all.Points, s.Points...)
		}
		return totalOf(all), true
	case "min", "max":
		var best *float64
		var text string
		for _, s := range res.Series {
			for _, pt := range s.Points {
				f, ok := parseValue(pt.Value)
				if !ok {
					continue
				}
				if best == nil || (q.Measure == "min" && f < *best) || (q.Measure == "max" && f > *best) {
					best, text = &f, *pt.Value
				}
			}
		}
		if best == nil {
			return "—", true
		}
		return text, true
	}
	return "", false
}

// changeWords compares a value with the previous period's: "+12 %", "−3 %".
func changeWords(now, prev string) (change, trend string) {
	a, errA := strconv.ParseFloat(now, 64)
	b, errB := strconv.ParseFloat(prev, 64)
	switch {
	case errA != nil || errB != nil:
		return "", "flat"
	case a == b:
		return "no change", "flat"
	case b == 0:
		return "new", "up"
	}
	pct := (a - b) / math.Abs(b) * 100
	s := strconv.FormatFloat(math.Abs(pct), 'f', 0, 64)
	if math.Abs(pct) < 10 {
		s = strconv.FormatFloat(math.Abs(pct), 'f', 1, 64)
	}
	if pct > 0 {
		return "+" + s + " %", "up"
	}
	return "−" + s + " %", "down"
}

// durationWords is a median time: "45 s", "12 min", "3 h 20 min", "2 d 4 h".
func durationWords(sec int64) string {
	d := time.Duration(sec) * time.Second
	switch {
	case d < time.Minute:
		return strconv.FormatInt(sec, 10) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return strconv.Itoa(days) + " d"
	}
	return strconv.Itoa(days) + " d " + strconv.Itoa(h) + " h"
}

// endLabel keeps the last x-axis label inside the picture: near the right edge it
// ends there, so that a phone's larger type does not cut it.
func endLabel(labels []axisLabel, width float64) {
	if n := len(labels); n > 1 && labels[n-1].X > width-45 {
		labels[n-1].X, labels[n-1].Anchor = width, "end"
	}
}
