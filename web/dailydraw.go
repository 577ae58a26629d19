package web

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Daily charts of counts that are not a chart question's answer (a user's activity,
// a project's page views) are drawn here, as a board's charts are: an SVG the "plot"
// template writes, each bar naming its day and numbers in a <title>, an aria-label
// summary, and the numbers in a table.

// dailySeries is one count per day.
type dailySeries struct {
	Name   string  // "Page views": the legend and the table's header
	Noun   string  // "page view": a value's words
	Class  string  // its colour: s0 … s9
	Values []int64 // one per day
	Line   bool    // drawn as a line over the bars (a count that is part of another)
}

// dailyChart is a chart of days (UTC midnights, oldest first).
type dailyChart struct {
	Days    []time.Time
	Series  []dailySeries
	Stacked bool   // the bar series stack (parts of one whole)
	What    string // "Activity of Ada Lovelace": the start of the summary
	Empty   string // said instead of a picture when every value is 0
}

// countWords is "1 page view", "12 page views".
func countWords(n int64, noun string) string {
	return pluralText(strconv.FormatInt(n, 10), noun)
}

func dayWords(t time.Time) string { return t.Format("Mon 2 Jan 2006") }

// drawnDaily is a daily chart drawn twice: at a wide card's width for a screen, at a
// narrow one's for a phone (app.css shows one), where the wide picture's days and
// labels would be too small to read.
type drawnDaily struct {
	Wide, Narrow plot
	Note         string // under the table of numbers
}

func (c dailyChart) draw() drawnDaily {
	return drawnDaily{Wide: c.layout(plotWideW), Narrow: c.layout(plotNarrowW), Note: "Days with nothing are left out of the table."}
}

// layout lays the chart out at a width.
func (c dailyChart) layout(width float64) plot {
	p := plot{Display: "bar", Width: int(width), Height: int(plotH) + 26, LabelY: plotH + 20}
	n := len(c.Days)
	if len(c.Series) > 1 {
		for _, s := range c.Series {
			p.Legend = append(p.Legend, legendItem{Name: s.Name, Class: s.Class})
		}
	}
	p.Table.Head = []string{"Day (UTC)"}
	for _, s := range c.Series {
		p.Table.Head = append(p.Table.Head, s.Name)
	}
	var hi int64
	totals := make([]int64, len(c.Series))
	for i := range n {
		var stack int64
		for si, s := range c.Series {
			v := s.Values[i]
			totals[si] += v
			if c.Stacked && !s.Line {
				stack += v
			} else {
				hi = max(hi, v)
			}
		}
		hi = max(hi, stack)
	}
	if hi == 0 || n == 0 {
		p.Empty = c.Empty
		return p
	}
	// The table lists the days with something: a year of mostly empty days is read
	// faster without them (drawnDaily's Note says so).
	for i, d := range c.Days {
		row := plotRow{Label: dayWords(d)}
		any := false
		for _, s := range c.Series {
			any = any || s.Values[i] != 0
			row.Cells = append(row.Cells, strconv.FormatInt(s.Values[i], 10))
		}
		if any {
			p.Table.Rows = append(p.Table.Rows, row)
		}
	}
	step := float64(niceStep(int(min(hi, math.MaxInt32))))
	top := math.Ceil(float64(hi)/step) * step
	p.Left = 12 + 7*float64(len(formatTick(top, step))+1)
	p.AxisX = p.Left - 6
	y := func(v float64) float64 { return plotH - v/top*(plotH-plotTop) }
	for v := 0.0; v <= top+step/2; v += step {
		p.Grid = append(p.Grid, gridLine{Y: round1(y(v)), Text: formatTick(v, step)})
	}
	plotW := float64(p.Width)
	slot := (plotW - p.Left) / float64(n)
	if n > 93 { // months: a label where each begins, every third one on a narrow picture
		step := 1
		if width <= plotNarrowW {
			step = 3
		}
		k := 0
		for i, d := range c.Days {
			if d.Day() != 1 {
				continue
			}
			x := p.Left + float64(i)*slot
			if k++; (k-1)%step != 0 || x > plotW-30 {
				continue
			}
			text := d.Format("Jan")
			if d.Month() == time.January || len(p.Labels) == 0 {
				text = d.Format("Jan 2006")
			}
			p.Labels = append(p.Labels, axisLabel{X: round1(x), Text: text, Anchor: "start", Minor: step == 1 && len(p.Labels)%2 == 1})
		}
	} else {
		every := max(int(math.Ceil(float64(n)/(plotW/90))), 1)
		for i, d := range c.Days {
			if i%every != 0 {
				continue
			}
			l := axisLabel{X: round1(p.Left + float64(i)*slot + slot/2), Text: bucketAxis("day", d, i == 0), Anchor: "middle", Minor: (i/every)%2 == 1}
			if i == 0 {
				l.X, l.Anchor = p.Left, "start"
			}
			p.Labels = append(p.Labels, l)
		}
		endLabel(p.Labels, plotW)
	}
	var bars []dailySeries
	for _, s := range c.Series {
		if !s.Line {
			bars = append(bars, s)
		}
	}
	gap := math.Min(slot*0.2, 2)
	for i, d := range c.Days {
		label := c.hover(i, d)
		var base float64
		for bi, s := range bars {
			v := float64(s.Values[i])
			if v == 0 {
				continue
			}
			x, w := p.Left+float64(i)*slot+gap/2, slot-gap
			y0 := base
			if c.Stacked {
				base += v
			} else {
				w /= float64(len(bars))
				x += float64(bi) * w
				y0 = 0
			}
			h := math.Max(y(y0)-y(y0+v), 1.5)
			p.Bars = append(p.Bars, plotBar{X: round1(x), Y: round1(y(y0) - h), W: round1(math.Max(w, 0.6)), H: round1(h), Class: s.Class, Label: label})
		}
	}
	for _, s := range c.Series {
		if !s.Line {
			continue
		}
		line := plotLine{Class: s.Class}
		pts := make([]string, 0, n)
		for i, d := range c.Days {
			x, yy := round1(p.Left+float64(i)*slot+slot/2), round1(y(float64(s.Values[i])))
			pts = append(pts, ftoa(x)+","+ftoa(yy))
			if n <= 31 { // a dot per day while they fit; the bars name longer ranges' days
				line.Dots = append(line.Dots, plotDot{X: x, Y: yy, Label: c.hover(i, d)})
			}
		}
		line.Points = strings.Join(pts, " ")
		p.Lines = append(p.Lines, line)
	}
	p.Summary = c.summary(totals)
	return p
}

// hover names a day and its numbers: "Mon 2 Nov 2026: 3 events, 12 page views".
func (c dailyChart) hover(i int, d time.Time) string {
	var parts []string
	for _, s := range c.Series {
		parts = append(parts, countWords(s.Values[i], s.Noun))
	}
	return dayWords(d) + ": " + strings.Join(parts, ", ")
}

// summary is the picture's aria-label: what, over which days, the totals and the
// busiest day.
func (c dailyChart) summary(totals []int64) string {
	var b strings.Builder
	b.WriteString(c.What + ", per day (UTC), " + rangeWords(c.Days[0], c.Days[len(c.Days)-1].AddDate(0, 0, 1)))
	for si, s := range c.Series {
		best := 0
		for i, v := range s.Values {
			if v > s.Values[best] {
				best = i
			}
		}
		b.WriteString(". " + s.Name + ": ")
		if !s.Line {
			b.WriteString("total " + strconv.FormatInt(totals[si], 10) + ", ")
		}
		b.WriteString("most " + countWords(s.Values[best], s.Noun) + " on " + dayWords(c.Days[best]))
	}
	b.WriteString(". The numbers are in the table below.")
	return b.String()
}

// utcDays are the n UTC days ending with the day of now, oldest first.
func utcDays(now time.Time, n int) []time.Time {
	last := now.UTC().Truncate(24 * time.Hour)
	days := make([]time.Time, n)
	for i := range days {
		days[i] = last.AddDate(0, 0, i-n+1)
	}
	return days
}
