package tidings

import (
	"context"
	"errors"
	"strings"
	"time"
)

// A chart is a question about a project's events: what is counted (Measure), which
// events (a feed search), split how (Split), in which buckets of which time zone, over
// which range. ParseChart checks one as written in a URL or a form; package charts
// answers it from a store.

// The words a chart's fields accept.
var (
	ChartMeasures = []string{"count", "users", "sum:KEY", "avg:KEY", "min:KEY", "max:KEY"}
	ChartBuckets  = []string{"hour", "day", "week", "month"}
	ChartSplits   = []string{"", "channel", "tag:KEY"}
	ChartDisplays = []string{"line", "bar", "stacked", "number", "table"}
	// ChartRanges are the dashboard's ranges (range=); from and to give any other.
	ChartRanges = []string{"24h", "7d", "30d", "90d", "12m"}
)

// Limits that bound a chart's cost: its number of buckets, its range, how many series
// a split draws (the rest are summed as "other"), and how many events a question that
// the hourly counts cannot answer may read.
const (
	MaxChartBuckets = 800
	MaxChartRange   = 5 * 366 * 24 * time.Hour
	MaxChartSeries  = 10
	MaxChartScan    = 250_000
)

// ChartParams is a chart's question as written: the query parameters of
// GET /v1/charts/query, of a board's chart and of the dashboard's chart form.
type ChartParams struct {
	Project string
	Measure string // count (""), users, sum:KEY, avg:KEY, min:KEY, max:KEY
	Q       string // the feed's search syntax
	Split   string // "", channel, tag:KEY
	Bucket  string // hour, day (""), week, month
	Range   string // one of ChartRanges; from and to win over it
	From    string // RFC 3339 (or a day, 2026-11-01, at the zone's midnight)
	To      string
	TZ      string // IANA zone; "" is UTC
}

// ChartQuery is a checked chart question.
type ChartQuery struct {
	Project string
	Q       string
	Search  Search
	Measure string // count, users, sum, avg, min, max
	Key     string // the number tag of sum, avg, min and max
	Split   string // "", channel, tag
	SplitBy string // the tag key of a split by tag
	Bucket  string
	// From and To bound the events' timestamps: From <= ts < To.
	From, To time.Time
	Loc      *time.Location
}

// ChartSeries is one line (or bar colour) of a chart: all the events (Key nil), one
// channel's or one tag value's (Key), or the rest of a split (Other).
type ChartSeries struct {
	Key    *string
	Other  bool
	Points []ChartPoint
}

// ChartPoint is one bucket's value, an exact decimal; nil for an average, minimum or
// maximum over no event.
type ChartPoint struct {
	Start time.Time
	Value *string
}

// ChartResult is a chart's answer: every bucket of every series, zeros included.
type ChartResult struct {
	Query  *ChartQuery
	Series []ChartSeries
	// Scanned is how many events were read to answer (0 when the hourly counts did).
	Scanned int
}

// ParseChart checks a chart question. now anchors the default range (the last 30
// days, whole buckets) and the dashboard's ranges. Errors: EValidation naming each
// field with the values it accepts.
func ParseChart(p ChartParams, now time.Time) (*ChartQuery, error) {
	var pr Problems
	q := &ChartQuery{Project: p.Project, Q: p.Q, Bucket: p.Bucket, Loc: time.UTC}
	if q.Bucket == "" {
		q.Bucket = "day"
	}
	if !oneOf(q.Bucket, ChartBuckets) {
		pr.Add("bucket", "enum", "must be one of hour, day, week, month (got %q)", p.Bucket)
	}
	m := p.Measure
	if m == "" {
		m = "count"
	}
	kind, key, _ := strings.Cut(m, ":")
	switch {
	case (kind == "count" || kind == "users") && key == "":
		q.Measure = kind
	case oneOf(kind, []string{"sum", "avg", "min", "max"}) && ValidName(key):
		q.Measure, q.Key = kind, key
	default:
		pr.Add("measure", "enum", "must be count, users, or sum:KEY, avg:KEY, min:KEY, max:KEY of a number tag (got %q)", p.Measure)
	}
	kind, key, hasKey := strings.Cut(p.Split, ":")
	switch {
	case p.Split == "" || p.Split == "channel":
		q.Split = p.Split
	case kind == "tag" && hasKey && ValidName(key):
		q.Split, q.SplitBy = "tag", key
	default:
		pr.Add("split", "enum", "must be empty, channel, or tag:KEY (got %q)", p.Split)
	}
	if p.TZ != "" && p.TZ != "Local" && len(p.TZ) <= 64 {
		loc, err := time.LoadLocation(p.TZ)
		if err != nil {
			pr.Add("tz", "zone", "must be an IANA time zone such as Europe/Paris or America/New_York (got %q)", p.TZ)
		} else {
			q.Loc = loc
		}
	} else if p.TZ != "" {
		pr.Add("tz", "zone", "must be an IANA time zone such as Europe/Paris or America/New_York (got %q)", p.TZ)
	}
	search, err := ParseSearch(p.Q, now)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			pr = append(pr, e.Fields...)
		}
	}
	q.Search = search
	if len(pr) > 0 {
		return nil, pr.Err()
	}
	q.From, q.To = q.rangeOf(&pr, p, now)
	if len(pr) > 0 {
		return nil, pr.Err()
	}
	q.checkCost(&pr)
	return q, pr.Err()
}

// rangeOf reads from, to and range=; by default the last 30 days in whole buckets.
func (q *ChartQuery) rangeOf(pr *Problems, p ChartParams, now time.Time) (from, to time.Time) {
	now = now.In(q.Loc)
	to = q.next(q.Floor(now)) // the bucket of now, whole
	switch p.Range {
	case "", "30d":
		from = q.Floor(now.AddDate(0, 0, -29))
		if q.Bucket == "hour" {
			from = now.Add(-30 * 24 * time.Hour).Truncate(time.Hour)
		}
	case "24h":
		from = q.Floor(now.Add(-23 * time.Hour))
	case "7d":
		from = q.Floor(now.AddDate(0, 0, -6))
	case "90d":
		from = q.Floor(now.AddDate(0, 0, -89))
	case "12m":
		from = q.Floor(time.Date(now.Year(), now.Month()-11, 1, 0, 0, 0, 0, q.Loc))
	default:
		pr.Add("range", "enum", "must be one of 24h, 7d, 30d, 90d, 12m, or give from and to (got %q)", p.Range)
	}
	if p.Range == "24h" && q.Bucket != "hour" {
		from = q.Floor(now.Add(-23 * time.Hour))
	}
	if p.From != "" {
		t, ok := q.parseTime(p.From)
		if !ok {
			pr.Add("from", "time", "must be an RFC 3339 time like 2026-11-01T00:00:00Z or a day like 2026-11-01 (got %q)", p.From)
		}
		from = t
	}
	if p.To != "" {
		t, ok := q.parseTime(p.To)
		if !ok {
			pr.Add("to", "time", "must be an RFC 3339 time like 2026-11-30T00:00:00Z or a day like 2026-11-30 (got %q)", p.To)
		}
		to = t
	}
	if len(*pr) == 0 && !from.Before(to) {
		pr.Add("to", "range", "must come after from (from %s, to %s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from, to
}

func (q *ChartQuery) parseTime(v string) (time.Time, bool) {
	if t, err := time.ParseInLocation("2006-01-02", v, q.Loc); err == nil {
		return t, true
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// checkCost refuses a range too long for its buckets, saying what works.
func (q *ChartQuery) checkCost(pr *Problems) {
	if q.To.Sub(q.From) > MaxChartRange {
		pr.Add("from", "too_costly", "a chart covers at most 5 years: give a later from (the range is %s to %s)",
			q.From.Format("2006-01-02"), q.To.Format("2006-01-02"))
		return
	}
	n := 0
	for t := q.Floor(q.From); t.Before(q.To) && n <= MaxChartBuckets; t = q.next(t) {
		n++
	}
	if n > MaxChartBuckets {
		pr.Add("bucket", "too_costly", "%s buckets from %s to %s are more than %d: %s",
			q.Bucket, q.From.Format("2006-01-02"), q.To.Format("2006-01-02"), MaxChartBuckets, map[string]string{
				"hour":  "hour buckets cover at most 33 days; use day buckets, or a shorter range",
				"day":   "day buckets cover at most 2 years; use week or month buckets, or a shorter range",
				"week":  "week buckets cover at most 15 years; use month buckets, or a shorter range",
				"month": "use a shorter range",
			}[q.Bucket])
	}
}

// Floor is the start of t's bucket in the chart's zone: the hour, local midnight,
// Monday's midnight, or the first of the month.
func (q *ChartQuery) Floor(t time.Time) time.Time {
	t = t.In(q.Loc)
	switch q.Bucket {
	case "hour":
		// An hour's start in the zone: most zones' hours start on the UTC hour, some
		// (India, Nepal) on a half or a quarter.
		_, off := t.Zone()
		local := t.Add(time.Duration(off) * time.Second).UTC().Truncate(time.Hour)
		return local.Add(-time.Duration(off) * time.Second).In(q.Loc)
	case "week":
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, q.Loc)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, q.Loc)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, q.Loc)
}

// next is the start of the bucket after the one starting at t.
func (q *ChartQuery) next(t time.Time) time.Time {
	switch q.Bucket {
	case "hour":
		return q.Floor(t.Add(time.Hour + time.Minute))
	case "week":
		return t.AddDate(0, 0, 7)
	case "month":
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// Starts are the chart's buckets' starts: from the bucket of From to the last that
// begins before To. The first and last may be cut by From and To.
func (q *ChartQuery) Starts() []time.Time {
	var out []time.Time
	for t := q.Floor(q.From); t.Before(q.To); t = q.next(t) {
		out = append(out, t)
	}
	return out
}

// Span is the time a bucket's events have: [start, next) cut to [From, To).
func (q *ChartQuery) Span(start time.Time) (time.Time, time.Time) {
	from, to := start, q.next(start)
	if from.Before(q.From) {
		from = q.From
	}
	if to.After(q.To) {
		to = q.To
	}
	return from, to
}

// Events is the feed query of the chart's events: its search within [From, To). It
// returns false when the search can match nothing (it names two channels).
func (q *ChartQuery) Events() (EventQuery, bool) {
	eq := EventQuery{Project: q.Project}
	ok := eq.AddSearch(q.Search)
	eq.Since, eq.Until = q.From, q.To
	if !q.Search.Since.IsZero() && q.Search.Since.After(eq.Since) {
		eq.Since = q.Search.Since
	}
	if !q.Search.Until.IsZero() && q.Search.Until.Before(eq.Until) {
		eq.Until = q.Search.Until
	}
	return eq, ok && eq.Since.Before(eq.Until)
}

// Params writes q back as the parameters it was parsed from (with its range as from
// and to): what a link to its chart or its CSV carries.
func (q *ChartQuery) Params() ChartParams {
	p := ChartParams{Project: q.Project, Q: q.Q, Bucket: q.Bucket, From: q.From.Format(time.RFC3339), To: q.To.Format(time.RFC3339)}
	p.Measure = q.Measure
	if q.Key != "" {
		p.Measure += ":" + q.Key
	}
	p.Split = q.Split
	if q.Split == "tag" {
		p.Split = "tag:" + q.SplitBy
	}
	if q.Loc != time.UTC {
		p.TZ = q.Loc.String()
	}
	return p
}

func oneOf(s string, list []string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ErrScanBudget is what a store's ScanEvents returns when a question would read more
// events than it was allowed.
var ErrScanBudget = errors.New("the question reads more events than its budget")

// HourCount is a channel's event count in one UTC hour, from the store's hourly
// counts.
type HourCount struct {
	Channel string
	Hour    time.Time
	N       int64
}

// ChartStore answers the questions charts and funnels ask of a project's events, and
// keeps the project's board of saved charts.
type ChartStore interface {
	// ScanEvents calls fn with every event of the account's project that q selects
	// (its channel, event name, tags, words, users and [Since, Until): what the feed
	// lists for q, q.Matches holds for each), in no particular order. It reads at most
	// max events (before the checks it makes in Go) and returns ErrScanBudget when
	// more would be needed. Errors: EProjectNotFound, EChannelNotFound, fn's error.
	ScanEvents(ctx context.Context, accountID int64, q EventQuery, max int, fn func(*Event) error) error
	// CountHours returns the project's (one channel's when channel is not "") event
	// counts per channel and UTC hour for the hours in [from, to), from the hourly
	// counts; hours without events are left out. from and to are whole hours.
	// Errors: EProjectNotFound, EChannelNotFound.
	CountHours(ctx context.Context, accountID int64, project, channel string, from, to time.Time) ([]HourCount, error)
	BoardStore
}

// TagRollup is how many events a tag (a key and a value of a project) must have had for
// the store to keep its events counted per UTC hour: a chart of a common tag reads
// those counts, one of a rare tag reads the tag's few events.
const TagRollup = 10_000

// TagHourCount is the count of a tag value's events in one UTC hour.
type TagHourCount struct {
	Value string
	Hour  time.Time
	N     int64
}

// TagHourCounter is the part of ChartStore that counts tagged events per hour.
type TagHourCounter interface {
	// CountTagHours returns the counts per value and UTC hour, for the hours in
	// [from, to) (whole hours), of the project's events that have tag key — with
	// value when value is not nil; hours without events are left out. A value of at
	// least TagRollup events is read from its hourly counts; the others from their
	// events, at most max in all, or ErrScanBudget. Errors: EProjectNotFound.
	CountTagHours(ctx context.Context, accountID int64, project, key string, value *string, from, to time.Time, max int) ([]TagHourCount, error)
}
