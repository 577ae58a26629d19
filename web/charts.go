package web

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
	_ "time/tzdata" // the viewer's time zone, whatever the server's system has

	"github.com/tidings-dev/tidings"
)

// chart is a bar chart drawn as inline SVG by the server, with a y-axis of a few round
// values and gridlines.
type chart struct {
	Title     string
	Total     int
	TotalText string // "1 event", "12 events"
	Max       int
	Bars      []bar
	Labels    []axisLabel
	Grid      []gridLine
	Width     int
	Height    int
	Left      float64 // where the plot starts: the y-axis values are left of it
	AxisX     float64 // where they end
	Summary   string  // for screen readers
}

type bar struct {
	X, Y, W, H float64
	Count      int
	Label      string
}

type axisLabel struct {
	X      float64
	Text   string
	Anchor string // text-anchor: labels at the edges stay inside the picture
	Minor  bool   // hidden at phone width, where fewer labels fit
}

type gridLine struct {
	Y    float64
	Text string
}

const chartW, chartH, chartTop, chartLeft = 600.0, 150.0, 10.0, 40.0

// niceStep is the gridline interval for values up to max: 1, 2 or 5 times a power of
// ten, so that at most four lines sit above zero.
func niceStep(max int) int {
	if max <= 4 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(float64(max)/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if float64(max)/(m*p) <= 4 {
			return int(m * p)
		}
	}
	return int(10 * p)
}

// buildChart lays out one bar per bucket start. axis labels the bars it returns text for;
// hover names each bar's whole day and time.
func buildChart(title string, counts map[time.Time]int, starts []time.Time, axis, hover func(time.Time) string) chart {
	c := chart{Title: title, Width: int(chartW), Height: int(chartH) + 22, Left: chartLeft, AxisX: chartLeft - 6}
	for _, t := range starts {
		v := counts[t]
		c.Total += v
		c.Max = max(c.Max, v)
	}
	step := niceStep(c.Max)
	top := step * max(1, (c.Max+step-1)/step) // the highest gridline: bars scale to it
	for v := 0; v <= top; v += step {
		c.Grid = append(c.Grid, gridLine{Y: chartH - float64(v)/float64(top)*(chartH-chartTop), Text: strconv.Itoa(v)})
	}
	n := len(starts)
	slot := (chartW - chartLeft) / float64(n)
	for i, t := range starts {
		v := counts[t]
		h := float64(v) / float64(top) * (chartH - chartTop)
		if v > 0 && h < 2 {
			h = 2
		}
		c.Bars = append(c.Bars, bar{X: chartLeft + float64(i)*slot + slot*0.1, W: slot * 0.8, Y: chartH - h, H: h, Count: v, Label: hover(t) + ": " + plural(v, "event")})
		if text := axis(t); text != "" {
			l := axisLabel{X: chartLeft + float64(i)*slot + slot/2, Text: text, Anchor: "middle", Minor: len(c.Labels)%2 == 1}
			if i == 0 {
				l.X, l.Anchor = chartLeft, "start"
			}
			c.Labels = append(c.Labels, l)
		}
	}
	c.TotalText = plural(c.Total, "event")
	c.Summary = title + ": " + c.TotalText + ", at most " + itoa(c.Max) + " in one bar"
	return c
}

type chartsData struct {
	Channel  string
	Channels []string // the first choiceChannels, with Channel
	// MoreChannels are not in the list: the channel list page leads to their charts.
	MoreChannels int
	Daily        chart
	Hourly       chart
	Zone         string // the time zone of the buckets and labels
}

// viewerZone is the browser's time zone, which app.js keeps in the tz cookie; UTC
// until it has.
func viewerZone(r *http.Request) *time.Location {
	if c, err := r.Cookie("tz"); err == nil && len(c.Value) <= 64 && c.Value != "" && c.Value != "Local" {
		if loc, err := time.LoadLocation(c.Value); err == nil {
			return loc
		}
	}
	return time.UTC
}

func (s *Server) chartsPage(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	project, channel := r.PathValue("project"), r.URL.Query().Get("channel")
	loc := viewerZone(r)
	now := s.now().In(loc)
	// Hourly counts of the last 30 local days (the store keeps them rolled up), summed
	// into the viewer's days: days may have 23 or 25 hours.
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	var days []time.Time
	for i := 29; i >= 0; i-- {
		days = append(days, today.AddDate(0, 0, -i))
	}
	hours, err := s.store.CountEventsBy(r.Context(), sess.account.ID, project, channel, days[0].Truncate(time.Hour), time.Hour)
	if err != nil {
		return err
	}
	daily := map[time.Time]int{}
	for t, n := range hours {
		lt := t.In(loc)
		daily[time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc)] += n
	}
	hourStart := now.Truncate(time.Hour).Add(-47 * time.Hour)
	var hourStarts []time.Time
	hourly := map[time.Time]int{}
	for i := 0; i < 48; i++ {
		t := hourStart.Add(time.Duration(i) * time.Hour)
		hourStarts = append(hourStarts, t)
		hourly[t] = hours[t.UTC()]
	}
	cs, err := s.store.PageChannels(r.Context(), sess.account.ID, tidings.ChannelQuery{Project: project, Limit: choiceChannels})
	if err != nil {
		return err
	}
	d := chartsData{Channel: channel, Zone: loc.String(),
		Daily: buildChart("Events per day, last 30 days", daily, days, func(t time.Time) string {
			if int(t.Sub(days[0]).Hours()/24+0.5)%5 != 0 {
				return ""
			}
			return t.Format("2 Jan")
		}, func(t time.Time) string { return t.Format("Mon 2 Jan") }),
		// The hourly axis names the day at each midnight, and every bar its day and hour.
		Hourly: buildChart("Events per hour, last 48 hours", hourly, hourStarts, func(t time.Time) string {
			switch {
			case t.Hour() == 0:
				return t.Format("Mon 2 Jan")
			case t.Hour()%6 == 0:
				return t.Format("15:00")
			}
			return ""
		}, func(t time.Time) string { return t.Format("Mon 2 Jan, 15:00") }),
	}
	d.MoreChannels = cs.Total - len(cs.Channels)
	for _, c := range cs.Channels {
		d.Channels = append(d.Channels, c.Name)
	}
	if channel != "" && !slices.Contains(d.Channels, channel) {
		d.Channels = append(d.Channels, channel)
	}
	return s.render(w, r, "charts", &view{Title: project + " charts", Project: project, Channel: channel, Section: "charts", Data: d})
}

// plural is "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}
