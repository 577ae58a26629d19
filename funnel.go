package tidings

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// A funnel is 2 to 8 ordered steps, each a feed search, counted over users
// (user_id): a user converts to a step when they do it after the previous one, within
// the window after their first step. Step 1 is done in [From, To).

// Limits of a funnel.
const (
	MinFunnelSteps  = 2
	MaxFunnelSteps  = 8
	MinFunnelWindow = time.Hour
	MaxFunnelWindow = 90 * 24 * time.Hour
	// MaxFunnelRange is the longest [From, To) a funnel reads.
	MaxFunnelRange = 366 * 24 * time.Hour
	// MaxFunnelUsers is how many users of a drop-off a funnel lists.
	MaxFunnelUsers = 100
	// MaxFunnelSplitUsers is how many users of step 1 a funnel split by a property
	// looks up.
	MaxFunnelSplitUsers = 5000
)

// FunnelParams is a funnel's question as written (GET /v1/funnels/query, a board's funnel).
type FunnelParams struct {
	Project string
	Steps   []string // feed searches
	Window  string   // 1h to 90d: a number and h, d or w
	Range   string   // one of ChartRanges; from and to win over it
	From    string
	To      string
	TZ      string // the zone of a day given as from or to, and of range=
	SplitBy string // a user property (people's properties): a funnel per value
}

// FunnelQuery is a checked funnel.
type FunnelQuery struct {
	Project  string
	Steps    []string
	Searches []Search
	Window   time.Duration
	From, To time.Time
	Loc      *time.Location
	SplitBy  string
}

// FunnelStep is a step's outcome: how many users reached it, and the median time
// from their first step to it (nil for step 1, or when nobody reached it).
type FunnelStep struct {
	Q             string
	Users         int
	MedianSeconds *int64
	// Dropped are up to MaxFunnelUsers of the users who reached this step and not the
	// next, most recent first (empty for the last step).
	Dropped []string
}

// FunnelResult is a funnel's answer; with SplitBy, one per value of the property
// (at most MaxChartSeries, the rest together), Groups in order of users at step 1.
type FunnelResult struct {
	Query   *FunnelQuery
	Steps   []FunnelStep
	Groups  []FunnelGroup
	Scanned int
}

// FunnelGroup is the funnel of the users whose SplitBy property has Value (nil: the
// users without it, or beyond the first values, when Other).
type FunnelGroup struct {
	Value *string
	Other bool
	Steps []FunnelStep
}

// ParseFunnel checks a funnel. Errors: EValidation naming each field.
func ParseFunnel(p FunnelParams, now time.Time) (*FunnelQuery, error) {
	var pr Problems
	q := &FunnelQuery{Project: p.Project, Loc: time.UTC, SplitBy: p.SplitBy}
	if n := len(p.Steps); n < MinFunnelSteps || n > MaxFunnelSteps {
		pr.Add("step", "count", "a funnel has %d to %d steps (got %d)", MinFunnelSteps, MaxFunnelSteps, n)
	}
	for i, s := range p.Steps {
		search, err := ParseSearch(s, now)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				for _, f := range e.Fields {
					pr.Add("step["+strconv.Itoa(i)+"]", f.Type, "%s", f.Message)
				}
			}
			continue
		}
		if strings.TrimSpace(s) == "" {
			pr.Add("step["+strconv.Itoa(i)+"]", "required", "a step is a search such as event:\"Signed up\" or channel:payments")
		}
		q.Steps = append(q.Steps, s)
		q.Searches = append(q.Searches, search)
	}
	w := p.Window
	if w == "" {
		w = "7d"
	}
	q.Window = parseWindow(w)
	if q.Window < MinFunnelWindow || q.Window > MaxFunnelWindow {
		pr.Add("window", "range", "must be 1h to 90d: a number and h, d or w, such as 1h, 24h, 7d or 2w (got %q)", p.Window)
	}
	if p.SplitBy != "" && !ValidName(p.SplitBy) {
		pr.Add("split", "name", "must be a user property's name such as plan (got %q)", p.SplitBy)
	}
	c, err := ParseChart(ChartParams{Range: p.Range, From: p.From, To: p.To, TZ: p.TZ, Bucket: "day"}, now)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			for _, f := range e.Fields {
				if f.Type == "too_costly" { // more days than a chart draws: beyond a funnel's range too
					f.Path, f.Message = "from", "a funnel covers at most 366 days of first steps: give a later from"
				}
				pr = append(pr, f)
			}
		}
	} else {
		q.From, q.To, q.Loc = c.From, c.To, c.Loc
		if q.To.Sub(q.From) > MaxFunnelRange {
			pr.Add("from", "too_costly", "a funnel covers at most 366 days of first steps: give a later from (the range is %s to %s)",
				q.From.Format("2006-01-02"), q.To.Format("2006-01-02"))
		}
	}
	return q, pr.Err()
}

// parseWindow reads 1h, 36h, 7d, 2w; 0 when it is none of these.
func parseWindow(s string) time.Duration {
	if len(s) < 2 {
		return 0
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n <= 0 || n > 100000 {
		return 0
	}
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	return time.Duration(n) * unit
}

// WindowText writes a window back in days (7d, 14d) or hours (1h, 36h).
func WindowText(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h"
}
