package charts

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/tidings-dev/tidings"
)

// Funnel answers a funnel: each step's events (with a user_id) are read within the
// budget, step 1's in [From, To) and the others' up to a window after To, and each
// user is followed through the steps in order. A user's step 1 is their first in the
// range; each later step is its first event at the same time as the previous step or
// after, and no later than the window after step 1.
func Funnel(ctx context.Context, store Store, accountID int64, q *tidings.FunnelQuery) (*tidings.FunnelResult, error) {
	times := make([]map[string][]time.Time, len(q.Searches))
	res := &tidings.FunnelResult{Query: q}
	budget, page := allowance(ctx)
	if budget <= 0 {
		return nil, spent()
	}
	full := budget == tidings.MaxChartScan
	for i, s := range q.Searches {
		eq := tidings.EventQuery{Project: q.Project}
		ok := eq.AddSearch(s)
		eq.Since, eq.Until = q.From, q.To.Add(q.Window)
		if i == 0 {
			eq.Until = q.To
		}
		if !s.Since.IsZero() && s.Since.After(eq.Since) {
			eq.Since = s.Since
		}
		if !s.Until.IsZero() && s.Until.Before(eq.Until) {
			eq.Until = s.Until
		}
		times[i] = map[string][]time.Time{}
		if !ok || !eq.Since.Before(eq.Until) {
			continue
		}
		n := 0
		err := store.ScanEvents(ctx, accountID, eq, budget, func(ev *tidings.Event) error {
			n++
			if ev.UserID != "" {
				times[i][ev.UserID] = append(times[i][ev.UserID], ev.Timestamp)
			}
			return nil
		})
		if page != nil {
			page.Add(-int64(n))
		}
		if errors.Is(err, tidings.ErrScanBudget) && !full {
			return nil, spent()
		}
		if errors.Is(err, tidings.ErrScanBudget) {
			var p tidings.Problems
			p.Add("from", "too_costly", "the steps match more than %d events together (step %d, %q, from %s to %s, read %d of them): narrow the steps' searches, or the range",
				tidings.MaxChartScan, i+1, q.Steps[i], eq.Since.Format("2006-01-02"), eq.Until.Format("2006-01-02"), n)
			return nil, p.Err()
		}
		if err != nil {
			return nil, err
		}
		res.Scanned += n
		budget -= n
		if budget <= 0 {
			budget = 1 // the next step reads at most one event: any more is over budget
		}
	}
	for _, m := range times {
		for _, ts := range m {
			slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		}
	}
	res.Steps = walk(q, times)
	if q.SplitBy != "" {
		groups, err := split(ctx, store, accountID, q, times)
		if err != nil {
			return nil, err
		}
		res.Groups = groups
	}
	return res, nil
}

// split walks the funnel once per value of the users' SplitBy property: the
// MaxChartSeries values with the most users at step 1, then the others (and the users
// without it) together. Each user of step 1 is looked up: at most MaxFunnelSplitUsers.
func split(ctx context.Context, store Store, accountID int64, q *tidings.FunnelQuery, times []map[string][]time.Time) ([]tidings.FunnelGroup, error) {
	if n := len(times[0]); n > tidings.MaxFunnelSplitUsers {
		var p tidings.Problems
		p.Add("split", "too_costly", "a funnel split by a property follows at most %d users, and %d did step 1 from %s to %s: narrow the range or the first step",
			tidings.MaxFunnelSplitUsers, n, q.From.Format("2006-01-02"), q.To.Format("2006-01-02"))
		return nil, p.Err()
	}
	byValue := map[string][]string{}
	const none = "\x00"
	for user := range times[0] {
		value := none
		p, err := store.FindPerson(ctx, accountID, q.Project, user)
		switch {
		case tidings.ErrorCode(err) == tidings.ENotFound:
		case err != nil:
			return nil, err
		default:
			if v, ok := p.Properties.Get(q.SplitBy); ok {
				value = v.Value
			}
		}
		byValue[value] = append(byValue[value], user)
	}
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		if v != none {
			values = append(values, v)
		}
	}
	slices.SortFunc(values, func(a, b string) int {
		if c := cmp.Compare(len(byValue[b]), len(byValue[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	rest := byValue[none]
	var out []tidings.FunnelGroup
	for i, v := range values {
		if i >= tidings.MaxChartSeries {
			rest = append(rest, byValue[v]...)
			continue
		}
		out = append(out, tidings.FunnelGroup{Value: &v, Steps: walk(q, only(times, byValue[v]))})
	}
	if len(rest) > 0 {
		out = append(out, tidings.FunnelGroup{Other: true, Steps: walk(q, only(times, rest))})
	}
	return out, nil
}

// only is times with step 1 kept to users.
func only(times []map[string][]time.Time, users []string) []map[string][]time.Time {
	first := make(map[string][]time.Time, len(users))
	for _, u := range users {
		first[u] = times[0][u]
	}
	return append([]map[string][]time.Time{first}, times[1:]...)
}

// walk follows each user of step 1 through the steps.
func walk(q *tidings.FunnelQuery, times []map[string][]time.Time) []tidings.FunnelStep {
	type reached struct {
		user string
		at   time.Time
	}
	steps := make([]tidings.FunnelStep, len(times))
	took := make([][]int64, len(times))        // seconds from step 1, per user who reached the step
	reachedBy := make([][]reached, len(times)) // who reached each step
	for user, ts := range times[0] {
		t1 := ts[0]
		prev := t1
		for k := range times {
			if k > 0 {
				later := times[k][user]
				j, _ := slices.BinarySearchFunc(later, prev, func(a, b time.Time) int { return a.Compare(b) })
				if j == len(later) || later[j].After(t1.Add(q.Window)) {
					break
				}
				prev = later[j]
			}
			reachedBy[k] = append(reachedBy[k], reached{user, prev})
			took[k] = append(took[k], int64(prev.Sub(t1)/time.Second))
		}
	}
	for k := range steps {
		steps[k] = tidings.FunnelStep{Q: q.Steps[k], Users: len(reachedBy[k]), Dropped: []string{}}
		if k > 0 && len(took[k]) > 0 {
			m := median(took[k])
			steps[k].MedianSeconds = &m
		}
	}
	for k := 0; k+1 < len(steps); k++ {
		went := map[string]bool{}
		for _, r := range reachedBy[k+1] {
			went[r.user] = true
		}
		var dropped []reached
		for _, r := range reachedBy[k] {
			if !went[r.user] {
				dropped = append(dropped, r)
			}
		}
		slices.SortFunc(dropped, func(a, b reached) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			return cmp.Compare(a.user, b.user)
		})
		for i := 0; i < len(dropped) && i < tidings.MaxFunnelUsers; i++ {
			steps[k].Dropped = append(steps[k].Dropped, dropped[i].user)
		}
	}
	return steps
}

// median of whole seconds: the middle one, or the mean of the two middle ones
// (rounded down).
func median(v []int64) int64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
