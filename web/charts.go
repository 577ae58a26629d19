package web

import (
	"math"
	"net/http"
	"time"
	_ "time/tzdata" // the viewer's time zone, whatever the server's system has
)

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

// niceStep is the gridline interval for counts up to max: 1, 2 or 5 times a power of
// ten, so that at most four lines sit above zero.
func niceStep(max int) int {
	if max <= 4 {
		return 1
	}
	return int(math.Max(1, niceStepF(float64(max))))
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

// plural is "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}
