package web

import (
	"math"
	"net/url"
	"strconv"

	"github.com/tidings-dev/tidings"
)

// funnelView is a funnel drawn: a horizontal bar per step, as wide as its share of
// step 1's users, with its conversions, median time and drop-off.
type funnelView struct {
	Steps   []funnelStepView
	Summary string
	Empty   string
	Overall string // "12.5 %" of step 1's users reached the last step
	// Split is the user property of a split funnel; Groups its values' funnels.
	Split  string
	Groups []funnelGroupView
	Heads  []string // Step 1, Step 2…
}

// funnelGroupView is one value's funnel as a table row: users per step, conversion.
type funnelGroupView struct {
	Name      string
	Users     []int
	Converted string
}

type funnelStepView struct {
	N          int
	Q          string
	Users      int
	Width      float64 // of 100
	FromPrev   string  // "" for step 1
	FromFirst  string
	Median     string // "3 h 20 min"; "" for step 1 or when nobody reached it
	Dropped    int    // users who reached this step and not the next
	DropURL    string // the list of those users
	DropListed int    // how many of them the list shows
}

func percent(a, b int) string {
	if b == 0 {
		return "—"
	}
	p := float64(a) / float64(b) * 100
	if p == math.Trunc(p) {
		return strconv.Itoa(int(p)) + " %"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + " %"
}

// drawFunnel lays a funnel's answer out; dropURL is the list of a step's drop-offs
// (nil: none).
func drawFunnel(res *tidings.FunnelResult, dropURL func(step int) string) funnelView {
	var v funnelView
	q := res.Query
	if len(res.Steps) == 0 || res.Steps[0].Users == 0 {
		v.Empty = "No user did step 1 (" + q.Steps[0] + ") " + rangeWords(q.From.In(q.Loc), q.To.In(q.Loc)) +
			". Events count in a funnel only with a user_id. Try a longer range, or another first step."
		return v
	}
	first := res.Steps[0].Users
	for i, st := range res.Steps {
		sv := funnelStepView{N: i + 1, Q: st.Q, Users: st.Users, Width: math.Max(0.5, float64(st.Users)/float64(first)*100),
			FromFirst: percent(st.Users, first)}
		if st.Users == 0 {
			sv.Width = 0
		}
		sv.Width = round1(sv.Width)
		if i > 0 {
			sv.FromPrev = percent(st.Users, res.Steps[i-1].Users)
		}
		if st.MedianSeconds != nil {
			sv.Median = durationWords(*st.MedianSeconds)
		}
		if i+1 < len(res.Steps) {
			sv.Dropped = st.Users - res.Steps[i+1].Users
			sv.DropListed = len(st.Dropped)
			if sv.Dropped > 0 && dropURL != nil {
				sv.DropURL = dropURL(i + 1)
			}
		}
		v.Steps = append(v.Steps, sv)
	}
	last := res.Steps[len(res.Steps)-1].Users
	v.Overall = percent(last, first)
	if q.SplitBy != "" {
		v.Split = q.SplitBy
		for i := range res.Steps {
			v.Heads = append(v.Heads, "Step "+strconv.Itoa(i+1))
		}
		for _, g := range res.Groups {
			gv := funnelGroupView{Name: "(none)"}
			switch {
			case g.Other:
				gv.Name = "Other"
			case g.Value != nil:
				gv.Name = *g.Value
			}
			for _, st := range g.Steps {
				gv.Users = append(gv.Users, st.Users)
			}
			if len(g.Steps) > 0 {
				gv.Converted = percent(g.Steps[len(g.Steps)-1].Users, g.Steps[0].Users)
			}
			v.Groups = append(v.Groups, gv)
		}
	}
	v.Summary = "Funnel of " + strconv.Itoa(len(res.Steps)) + " steps: " + strconv.Itoa(first) + " users did step 1, " +
		strconv.Itoa(last) + " reached the last (" + v.Overall + ")"
	return v
}

// funnelQuery writes a funnel's parameters as a URL query.
func funnelQuery(steps []string, window, split string) url.Values {
	v := url.Values{}
	for _, s := range steps {
		v.Add("step", s)
	}
	if window != "" {
		v.Set("window", window)
	}
	if split != "" {
		v.Set("split", split)
	}
	return v
}
