package web

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// An insight's history is a chart too: its values over the board's range, drawn as a
// line on a time axis (an insight changes when it is sent, not once per bucket).

// maxHistoryPoints is how many of an insight's latest values the page reads.
const maxHistoryPoints = 5000

type historyData struct {
	Title   string
	Ranges  []rangeLink
	Range   boardRange
	Custom  bool
	Plot    *plot
	Rows    []plotRow // newest first
	Cut     string    // the range starts before the oldest value read
	Empty   string
	Latest  string
	Numeric bool
	// Prefix and Suffix are the insight's, around its latest value.
	Prefix, Suffix string
}

func (s *Server) insightHistoryPage(w http.ResponseWriter, r *http.Request) error {
	project, title := r.PathValue("project"), r.URL.Query().Get("title")
	if title == "" {
		return redirect(w, r, "/p/"+project+"/insights")
	}
	loc := viewerZone(r)
	br := rangeOf(r.URL.Query())
	d := historyData{Title: title, Range: br, Custom: br.Range == "",
		Ranges: rangeLinks("/p/"+project+"/insights/history", br, url.Values{"title": {title}})}
	cq, err := tidings.ParseChart(tidings.ChartParams{Project: project, Range: br.Range, From: br.From, To: br.end(), TZ: loc.String(), Bucket: "day"}, s.now())
	if err != nil {
		return err
	}
	// The insight itself, for its prefix and suffix: a project holds at most
	// MaxInsightsPerProject, listed by one read.
	all, err := s.store.ListInsights(r.Context(), sessionFrom(r).account.ID, project)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(in *tidings.Insight) bool { return in.Title == title })
	if i < 0 {
		return tidings.InsightNotFound(project, title)
	}
	d.Prefix, d.Suffix = all[i].Prefix, all[i].Suffix
	points, err := s.store.InsightHistory(r.Context(), sessionFrom(r).account.ID, project, title, maxHistoryPoints)
	if err != nil {
		return err
	}
	if len(points) == maxHistoryPoints && points[0].Time.After(cq.From) {
		d.Cut = "This history shows the latest " + strconv.Itoa(maxHistoryPoints) + " values, from " +
			points[0].Time.In(loc).Format("Mon 2 Jan 2006, 15:04") + ": older ones are not drawn."
	}
	var in []tidings.InsightPoint
	for _, p := range points {
		if !p.Time.Before(cq.From) && p.Time.Before(cq.To) {
			in = append(in, p)
		}
	}
	if len(points) > 0 {
		d.Latest = points[len(points)-1].Value
	}
	for i := len(in) - 1; i >= 0 && len(d.Rows) < 200; i-- {
		d.Rows = append(d.Rows, plotRow{Label: in[i].Time.In(loc).Format("Mon 2 Jan 2006, 15:04:05"), Cells: []string{in[i].Value}})
	}
	if len(in) == 0 {
		d.Empty = "No value of “" + title + "” was recorded " + rangeWords(cq.From.In(loc), cq.To.In(loc)) + ". Try a longer range."
	} else if p, ok := drawHistory(title, in, cq.From, cq.To, loc); ok {
		d.Plot, d.Numeric = &p, true
	}
	return s.render(w, r, "insighthistory", &view{Title: title + " history", Project: project, Section: "insights", Data: d})
}

// drawHistory draws numeric values on a time axis from from to to; ok is false when a
// value is not a number.
func drawHistory(title string, points []tidings.InsightPoint, from, to time.Time, loc *time.Location) (plot, bool) {
	p := plot{Display: "line", Width: int(plotWideW), Height: int(plotH) + 26, LabelY: plotH + 20}
	vals := make([]float64, len(points))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pt := range points {
		f, err := strconv.ParseFloat(strings.TrimSpace(pt.Value), 64)
		if err != nil {
			return p, false
		}
		vals[i] = f
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	step := niceStepF(hi - lo)
	top, bottom := math.Ceil(hi/step)*step, math.Floor(lo/step)*step
	if top == bottom {
		top = bottom + step
	}
	p.Left = 12 + 7*float64(max(len(formatTick(top, step)), len(formatTick(bottom, step)))+1)
	p.AxisX = p.Left - 6
	y := func(v float64) float64 { return plotH - (v-bottom)/(top-bottom)*(plotH-plotTop) }
	x := func(t time.Time) float64 {
		return p.Left + t.Sub(from).Seconds()/to.Sub(from).Seconds()*(float64(p.Width)-p.Left-4)
	}
	for v := bottom; v <= top+step/2; v += step {
		p.Grid = append(p.Grid, gridLine{Y: round1(y(v)), Text: formatTick(v, step)})
	}
	// Six labels along the axis, at local midnights when the range spans days.
	span := to.Sub(from)
	for i := 0; i < 6; i++ {
		t := from.Add(span * time.Duration(i) / 6).In(loc)
		text := t.Format("2 Jan")
		if span <= 48*time.Hour {
			text = t.Format("15:04")
		}
		l := axisLabel{X: round1(x(t)), Text: text, Anchor: "middle", Minor: i%2 == 1}
		if i == 0 {
			l.Anchor = "start"
		}
		p.Labels = append(p.Labels, l)
	}
	endLabel(p.Labels, float64(p.Width))
	p.Table = plotTable{Head: []string{"When", "Value"}}
	for i := len(points) - 1; i >= 0 && len(p.Table.Rows) < 200; i-- {
		p.Table.Rows = append(p.Table.Rows, plotRow{Label: points[i].Time.In(loc).Format("Mon 2 Jan 2006, 15:04:05"), Cells: []string{points[i].Value}})
	}
	line := plotLine{Class: "s0"}
	var pts []string
	for i, pt := range points {
		xx, yy := round1(x(pt.Time)), round1(y(vals[i]))
		pts = append(pts, ftoa(xx)+","+ftoa(yy))
		line.Dots = append(line.Dots, plotDot{X: xx, Y: yy, Label: pt.Time.In(loc).Format("Mon 2 Jan, 15:04") + ": " + pt.Value})
	}
	line.Points = strings.Join(pts, " ")
	p.Lines = []plotLine{line}
	p.Summary = title + " " + rangeWords(from.In(loc), to.In(loc)) + ": " + strconv.Itoa(len(points)) + " values, lowest " +
		strconv.FormatFloat(slices.Min(vals), 'f', -1, 64) + ", highest " + strconv.FormatFloat(slices.Max(vals), 'f', -1, 64) +
		", latest " + points[len(points)-1].Value + ". The values are in the table below."
	return p, true
}
