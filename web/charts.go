package web

import (
	"net/http"
	"time"
)

// chart is a bar chart drawn as inline SVG by the server.
type chart struct {
	Title   string
	Total   int
	Max     int
	Bars    []bar
	Labels  []axisLabel
	Width   int
	Height  int
	Summary string // for screen readers
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
}

const chartW, chartH, chartTop = 600.0, 150.0, 10.0

// buildChart lays out n buckets from start, each width wide.
func buildChart(title string, counts map[time.Time]int, start time.Time, width time.Duration, n int, label func(time.Time) string, every int) chart {
	c := chart{Title: title, Width: int(chartW), Height: int(chartH) + 20}
	for i := 0; i < n; i++ {
		v := counts[start.Add(time.Duration(i)*width)]
		c.Total += v
		c.Max = max(c.Max, v)
	}
	slot := chartW / float64(n)
	for i := 0; i < n; i++ {
		t := start.Add(time.Duration(i) * width)
		v := counts[t]
		h := 0.0
		if c.Max > 0 {
			h = float64(v) / float64(c.Max) * (chartH - chartTop)
		}
		if v > 0 && h < 2 {
			h = 2
		}
		c.Bars = append(c.Bars, bar{X: float64(i)*slot + slot*0.1, W: slot * 0.8, Y: chartH - h, H: h, Count: v, Label: label(t)})
		if i%every == 0 {
			l := axisLabel{X: float64(i)*slot + slot/2, Text: label(t), Anchor: "middle"}
			if l.X < 30 {
				l.X, l.Anchor = 0, "start"
			}
			c.Labels = append(c.Labels, l)
		}
	}
	c.Summary = title + ": " + itoa(c.Total) + " events, at most " + itoa(c.Max) + " in one bar"
	return c
}

type chartsData struct {
	Channel  string
	Channels []string
	Daily    chart
	Hourly   chart
}

func (s *Server) chartsPage(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	project, channel := r.PathValue("project"), r.URL.Query().Get("channel")
	now := s.now().UTC()
	dayStart := now.Truncate(24*time.Hour).AddDate(0, 0, -29)
	daily, err := s.store.CountEventsBy(r.Context(), sess.account.ID, project, channel, dayStart, 24*time.Hour)
	if err != nil {
		return err
	}
	hourStart := now.Truncate(time.Hour).Add(-47 * time.Hour)
	hourly, err := s.store.CountEventsBy(r.Context(), sess.account.ID, project, channel, hourStart, time.Hour)
	if err != nil {
		return err
	}
	cs, err := s.store.ListChannels(r.Context(), sess.account.ID, project)
	if err != nil {
		return err
	}
	d := chartsData{Channel: channel,
		Daily:  buildChart("Events per day, last 30 days", daily, dayStart, 24*time.Hour, 30, func(t time.Time) string { return t.Format("2 Jan") }, 5),
		Hourly: buildChart("Events per hour, last 48 hours", hourly, hourStart, time.Hour, 48, func(t time.Time) string { return t.Format("15:00") }, 6),
	}
	for _, c := range cs {
		d.Channels = append(d.Channels, c.Name)
	}
	return s.render(w, r, "charts", &view{Title: project + " charts", Project: project, Channel: channel, Section: "charts", Data: d})
}
