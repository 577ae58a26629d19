// Package charts answers the questions of tidings.ChartQuery and tidings.FunnelQuery
// from a store: from its hourly counts when they can (events counted by channel, in
// buckets of whole hours), otherwise by reading the question's events within a budget
// (tidings.MaxChartScan) and counting them here, with the feed's own filter, so that
// a chart's numbers are the feed's numbers on every store.
package charts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tidings-dev/tidings"
)

// Store is what the questions read: the events (tidings.ChartStore) and, to split a
// funnel by a property, the people.
type Store interface {
	tidings.ChartStore
	FindPerson(ctx context.Context, accountID int64, project, userID string) (*tidings.Person, error)
}

// Answer answers a chart. Errors: the store's (EProjectNotFound, EChannelNotFound),
// EValidation for a number measure over a tag that holds text, or for a question
// that reads more than its budget (saying which range works).
func Answer(ctx context.Context, store Store, accountID int64, q *tidings.ChartQuery) (*tidings.ChartResult, error) {
	starts := q.Starts()
	eq, ok := q.Events()
	a := newAgg(q, starts)
	res := &tidings.ChartResult{Query: q}
	switch {
	case !ok:
		// The search names two channels (or users): nothing matches. The project
		// must exist all the same.
		if _, err := store.CountHours(ctx, accountID, q.Project, "", q.From.Truncate(time.Hour), q.From.Truncate(time.Hour)); err != nil {
			return nil, err
		}
	default:
		answered, err := fromCounts(ctx, store, accountID, q, eq, a)
		if err != nil {
			return nil, err
		}
		if answered {
			break
		}
		n := 0
		limit, page := allowance(ctx)
		if limit <= 0 {
			return nil, spent()
		}
		err = store.ScanEvents(ctx, accountID, eq, limit, func(ev *tidings.Event) error {
			n++
			return a.add(ev)
		})
		if page != nil {
			page.Add(-int64(n))
		}
		if errors.Is(err, tidings.ErrScanBudget) && limit < tidings.MaxChartScan {
			return nil, spent()
		}
		if errors.Is(err, tidings.ErrScanBudget) {
			return nil, tooCostly(ctx, store, accountID, q, eq)
		}
		if err != nil {
			return nil, err
		}
		res.Scanned = n
	}
	res.Series = a.series()
	return res, nil
}

// fromCounts answers q from the store's hourly counts when they can: events counted,
// filtered by nothing but a channel or one tag (no priority), split by nothing, by channel (without a
// tag filter) or by a tag's values (without a filter), in buckets of whole UTC hours.
// It returns false when they cannot, and the events are to be read.
func fromCounts(ctx context.Context, store Store, accountID int64, q *tidings.ChartQuery, eq tidings.EventQuery, a *agg) (bool, error) {
	if q.Measure != "count" || eq.Event != "" || len(eq.Terms) > 0 || len(eq.Users) > 0 || len(eq.Tags) > 1 ||
		eq.MinPriority != 0 || eq.MaxPriority != 0 {
		return false, nil
	}
	whole := func(t time.Time) bool { return t.Equal(t.Truncate(time.Hour)) }
	if !whole(eq.Since) || !whole(eq.Until) {
		return false, nil
	}
	for _, s := range a.starts {
		if !whole(s) {
			return false, nil
		}
	}
	tags, _ := store.(tidings.TagHourCounter)
	switch {
	case len(eq.Tags) == 0 && q.Split != "tag":
		counts, err := store.CountHours(ctx, accountID, q.Project, eq.Channel, eq.Since, eq.Until)
		if err != nil {
			return false, err
		}
		for _, c := range counts {
			a.addCount(c.Hour, c.Channel, c.N)
		}
		return true, nil
	case tags != nil && len(eq.Tags) == 1 && eq.Channel == "" && q.Split == "":
		t := eq.Tags[0]
		counts, err := tags.CountTagHours(ctx, accountID, q.Project, t.Key, &t.Value, eq.Since, eq.Until, tidings.MaxChartScan)
		if errors.Is(err, tidings.ErrScanBudget) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, c := range counts {
			a.addCount(c.Hour, "", c.N)
		}
		return true, nil
	case tags != nil && len(eq.Tags) == 0 && eq.Channel == "" && q.Split == "tag":
		// Every value's hours, and every event's: the events without the tag are the
		// difference, part of "other".
		counts, err := tags.CountTagHours(ctx, accountID, q.Project, q.SplitBy, nil, eq.Since, eq.Until, tidings.MaxChartScan)
		if errors.Is(err, tidings.ErrScanBudget) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		all, err := store.CountHours(ctx, accountID, q.Project, "", eq.Since, eq.Until)
		if err != nil {
			return false, err
		}
		none := map[time.Time]int64{}
		for _, c := range all {
			none[c.Hour] += c.N
		}
		for _, c := range counts {
			a.addCount(c.Hour, c.Value, c.N)
			none[c.Hour] -= c.N
		}
		for hour, n := range none {
			if n > 0 {
				a.addCount(hour, "\x00", n)
			}
		}
		return true, nil
	}
	return false, nil
}

// tooCostly is the refusal of a question that reads more than its budget: it says
// from when on the range holds few enough events, by the hourly counts.
func tooCostly(ctx context.Context, store Store, accountID int64, q *tidings.ChartQuery, eq tidings.EventQuery) error {
	var p tidings.Problems
	counts, err := store.CountHours(ctx, accountID, q.Project, eq.Channel, eq.Since.Truncate(time.Hour), eq.Until.Truncate(time.Hour).Add(time.Hour))
	if err != nil {
		return err
	}
	slices.SortFunc(counts, func(a, b tidings.HourCount) int { return b.Hour.Compare(a.Hour) })
	var sum int64
	from := eq.Until
	for _, c := range counts {
		if sum+c.N > tidings.MaxChartScan {
			break
		}
		sum += c.N
		from = c.Hour
	}
	hint := "filter by a channel or a tag, or chart a shorter range"
	if from.After(eq.Since) && from.Before(eq.Until) {
		days := eq.Until.Sub(q.Floor(from).Add(24*time.Hour)) / (24 * time.Hour)
		if days >= 1 {
			hint = fmt.Sprintf("chart at most the last %d days (from %s), or filter by a channel or a tag", days, q.Floor(from).Add(24*time.Hour).Format("2006-01-02"))
		} else {
			hint = fmt.Sprintf("chart from %s on, or filter by a channel or a tag", from.Add(time.Hour).Format(time.RFC3339))
		}
	}
	p.Add("from", "too_costly", "this question reads more than %d events (%s): %s", tidings.MaxChartScan, describe(q), hint)
	return p.Err()
}

func describe(q *tidings.ChartQuery) string {
	m := q.Measure
	if q.Key != "" {
		m += ":" + q.Key
	}
	if q.Q != "" {
		return fmt.Sprintf("%s of %q", m, q.Q)
	}
	return m + " of every event"
}

// agg adds events up into a chart's buckets, per series.
type agg struct {
	q      *tidings.ChartQuery
	starts []time.Time
	by     map[string]*seriesAgg // by split value ("" without a split)
	has    map[string]bool       // split values seen
}

type seriesAgg struct {
	total   decimal.Decimal // over the range: what orders the series
	n       []int64         // events per bucket
	sum     []decimal.Decimal
	min     []*decimal.Decimal
	max     []*decimal.Decimal
	users   []map[string]struct{}
	present bool
}

func newAgg(q *tidings.ChartQuery, starts []time.Time) *agg {
	return &agg{q: q, starts: starts, by: map[string]*seriesAgg{}}
}

// bucket is the index of the bucket holding t, -1 outside the chart.
func (a *agg) bucket(t time.Time) int {
	if t.Before(a.q.From) || !t.Before(a.q.To) {
		return -1
	}
	i := sort.Search(len(a.starts), func(i int) bool { return a.starts[i].After(t) }) - 1
	return i
}

func (a *agg) get(key string) *seriesAgg {
	s := a.by[key]
	if s == nil {
		n := len(a.starts)
		s = &seriesAgg{n: make([]int64, n)}
		switch a.q.Measure {
		case "sum", "avg":
			s.sum = make([]decimal.Decimal, n)
		case "min":
			s.min = make([]*decimal.Decimal, n)
		case "max":
			s.max = make([]*decimal.Decimal, n)
		case "users":
			s.users = make([]map[string]struct{}, n)
		}
		a.by[key] = s
	}
	return s
}

// addCount adds n events of the hour starting at hour, of a series: the channel's
// (split by channel), the tag value's (split by tag), or the only one.
func (a *agg) addCount(hour time.Time, series string, n int64) {
	i := a.bucket(hour)
	if i < 0 {
		return
	}
	key := ""
	if a.q.Split != "" {
		key = series
	}
	s := a.get(key)
	s.n[i] += n
	s.total = s.total.Add(decimal.NewFromInt(n))
	s.present = true
}

// add adds one event.
func (a *agg) add(ev *tidings.Event) error {
	i := a.bucket(ev.Timestamp)
	if i < 0 {
		return nil
	}
	key := ""
	switch a.q.Split {
	case "channel":
		key = ev.Channel
	case "tag":
		t, ok := ev.Tags.Get(a.q.SplitBy)
		if !ok {
			key = "\x00" // no such tag: part of "other"
		} else {
			key = t.Value
		}
	}
	switch a.q.Measure {
	case "count":
		s := a.get(key)
		s.n[i]++
		s.total = s.total.Add(decimal.NewFromInt(1))
		s.present = true
	case "users":
		if ev.UserID == "" {
			return nil
		}
		s := a.get(key)
		if s.users[i] == nil {
			s.users[i] = map[string]struct{}{}
		}
		s.users[i][ev.UserID] = struct{}{}
		s.present = true
	default:
		t, ok := ev.Tags.Get(a.q.Key)
		if !ok {
			return nil
		}
		if t.Kind != tidings.KindNumber {
			var p tidings.Problems
			p.Add("measure", "not_number", "%s:%s needs a number tag, and tag %q holds %s (%q) on event %s: choose a number tag, or count",
				a.q.Measure, a.q.Key, a.q.Key, t.Kind, t.Value, ev.ID)
			return p.Err()
		}
		v, err := decimal.NewFromString(t.Value)
		if err != nil {
			return err
		}
		s := a.get(key)
		s.n[i]++
		s.present = true
		switch a.q.Measure {
		case "sum", "avg":
			s.sum[i] = s.sum[i].Add(v)
			s.total = s.total.Add(v)
		case "min":
			if s.min[i] == nil || v.LessThan(*s.min[i]) {
				s.min[i] = &v
			}
			s.total = s.total.Add(decimal.NewFromInt(1))
		case "max":
			if s.max[i] == nil || v.GreaterThan(*s.max[i]) {
				s.max[i] = &v
			}
			s.total = s.total.Add(decimal.NewFromInt(1))
		}
	}
	return nil
}

// series orders the series: without a split the one series (zeros when nothing
// matched); with one, the MaxChartSeries largest by their total over the range, then
// the rest together as "other" (events of other values, or without the tag).
func (a *agg) series() []tidings.ChartSeries {
	if a.q.Split == "" {
		return []tidings.ChartSeries{a.points(nil, false, a.get(""))}
	}
	if a.q.Measure == "users" {
		for _, s := range a.by {
			for _, u := range s.users {
				s.total = s.total.Add(decimal.NewFromInt(int64(len(u))))
			}
		}
	}
	keys := make([]string, 0, len(a.by))
	for k := range a.by {
		if k != "\x00" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y string) int {
		if c := a.by[y].total.Cmp(a.by[x].total); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	out := []tidings.ChartSeries{}
	var rest []*seriesAgg
	if s := a.by["\x00"]; s != nil {
		rest = append(rest, s)
	}
	for i, k := range keys {
		if i >= tidings.MaxChartSeries {
			rest = append(rest, a.by[k])
			continue
		}
		out = append(out, a.points(&k, false, a.by[k]))
	}
	if len(rest) > 0 {
		out = append(out, a.points(nil, true, a.merge(rest)))
	}
	return out
}

// merge adds series up into one: the "other" series.
func (a *agg) merge(list []*seriesAgg) *seriesAgg {
	m := &seriesAgg{n: make([]int64, len(a.starts))}
	switch a.q.Measure {
	case "sum", "avg":
		m.sum = make([]decimal.Decimal, len(a.starts))
	case "min":
		m.min = make([]*decimal.Decimal, len(a.starts))
	case "max":
		m.max = make([]*decimal.Decimal, len(a.starts))
	case "users":
		m.users = make([]map[string]struct{}, len(a.starts))
	}
	for _, s := range list {
		for i := range a.starts {
			m.n[i] += s.n[i]
			if m.sum != nil {
				m.sum[i] = m.sum[i].Add(s.sum[i])
			}
			if m.min != nil && s.min[i] != nil && (m.min[i] == nil || s.min[i].LessThan(*m.min[i])) {
				m.min[i] = s.min[i]
			}
			if m.max != nil && s.max[i] != nil && (m.max[i] == nil || s.max[i].GreaterThan(*m.max[i])) {
				m.max[i] = s.max[i]
			}
			if m.users != nil {
				for u := range s.users[i] {
					if m.users[i] == nil {
						m.users[i] = map[string]struct{}{}
					}
					m.users[i][u] = struct{}{}
				}
			}
		}
	}
	return m
}

func (a *agg) points(key *string, other bool, s *seriesAgg) tidings.ChartSeries {
	out := tidings.ChartSeries{Key: key, Other: other, Points: make([]tidings.ChartPoint, len(a.starts))}
	for i, start := range a.starts {
		var v *string
		set := func(d decimal.Decimal) { str := d.String(); v = &str }
		switch a.q.Measure {
		case "count":
			set(decimal.NewFromInt(s.n[i]))
		case "users":
			set(decimal.NewFromInt(int64(len(s.users[i]))))
		case "sum":
			set(s.sum[i])
		case "avg":
			if s.n[i] > 0 {
				set(s.sum[i].DivRound(decimal.NewFromInt(s.n[i]), 6))
			}
		case "min":
			if s.min[i] != nil {
				set(*s.min[i])
			}
		case "max":
			if s.max[i] != nil {
				set(*s.max[i])
			}
		}
		out.Points[i] = tidings.ChartPoint{Start: start, Value: v}
	}
	return out
}
