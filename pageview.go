package tidings

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Page views are what the browser script (ls.js) records once a user id is set: a user
// saw a path. They are not events: they never notify, never reach webhooks, have their
// own compact table and go with their project's retention. A user's sessions are
// derived from their activity (events and page views) counted per minute.

// Limits of page views.
const (
	MaxPageViewsPerCall = 20   // views one POST /v1/page may carry
	MaxPagePathLen      = 1024 // characters of a path, after cleaning
	MaxPageTitleLen     = 256
	MaxReferrerLen      = 1024
	MaxPageViewsPage    = 100 // views one GET /v1/pages answers at most
	DefaultPageViews    = 50
	// MaxPageViewsRead is the most views a store returns to one ListPageViews (the
	// dashboard folds up to this many into a journey; the API asks MaxPageViewsPage).
	MaxPageViewsRead = 1000
	// SessionGapMinutes: a user's session ends after more than this many whole minutes
	// without an event or a page view. Activity is counted per UTC minute.
	SessionGapMinutes = 30
	// ActivityDays is how far back a profile's activity chart goes.
	ActivityDays = 90
	// TopPagesShown is how many rows each top list (pages, entries, referrers) has.
	TopPagesShown = 10
	// MaxPageStatsDays is the longest range the Pages view answers.
	MaxPageStatsDays = 366
)

// PageView is one page a user viewed.
type PageView struct {
	UserID    string
	Path      string // cleaned: no query string but utm_* parameters, no fragment unless a "#/" route
	Title     string
	Referrer  string // cleaned like Path; "" when none
	Timestamp time.Time
	// Entry: the visitor came to this page from elsewhere (no referrer, or one on
	// another host than the page's): it counts among the entry pages.
	Entry bool
}

// NewPageViews is one call of POST /v1/page: one view or a batch.
type NewPageViews struct {
	Project string
	Views   []PageView
	// Host is the page's host (from the request's Origin header), "" when unknown:
	// a referrer on this host is a navigation inside the site, not an entry.
	Host string
}

// Check validates c, normalising it in place: paths and referrers cleaned (CleanPagePath,
// CleanReferrer), Entry set, a zero timestamp set to now. Problems name the view by
// index when the call is a batch (views.3.path).
func (c *NewPageViews) Check(p *Problems, now time.Time, batch bool) {
	CheckName(p, "project", c.Project)
	switch n := len(c.Views); {
	case n == 0:
		p.Add("views", "required", "must hold at least one page view")
	case n > MaxPageViewsPerCall:
		p.Add("views", "too_many", "at most %d page views are allowed in one call (got %d)", MaxPageViewsPerCall, n)
		return
	}
	for i := range c.Views {
		at := ""
		if batch {
			at = "views." + strconv.Itoa(i) + "."
		}
		c.Views[i].check(p, at, c.Host, now)
	}
}

func (v *PageView) check(p *Problems, at, host string, now time.Time) {
	if v.UserID == "" {
		p.Add(at+"user_id", "required", "is required: page views are recorded once a user id is set")
	} else {
		checkID(p, at+"user_id", v.UserID)
	}
	v.Path = strings.TrimSpace(v.Path)
	if v.Path == "" {
		p.Add(at+"path", "required", "is required")
	} else {
		v.Path = CleanPagePath(v.Path)
		checkPageText(p, at+"path", v.Path, MaxPagePathLen)
	}
	v.Title = strings.TrimSpace(v.Title)
	checkPageText(p, at+"title", v.Title, MaxPageTitleLen)
	if v.Referrer = CleanReferrer(strings.TrimSpace(v.Referrer)); v.Referrer != "" {
		checkPageText(p, at+"referrer", v.Referrer, MaxReferrerLen)
	}
	v.Entry = isEntry(v.Referrer, host)
	if v.Timestamp.IsZero() {
		v.Timestamp = now
	} else if v.Timestamp.Before(earliestTimestamp) || v.Timestamp.After(now.Add(24*time.Hour)) {
		p.Add(at+"timestamp", "range", "must be unix seconds between 946684800 (2000-01-01) and now + 24 hours")
	}
	v.Timestamp = v.Timestamp.UTC().Truncate(time.Millisecond)
}

func checkPageText(p *Problems, path, s string, max int) {
	if n := utf8.RuneCountInString(s); n > max {
		p.Add(path, "too_long", "must be at most %d characters (got %d)", max, n)
		return
	}
	checkText(p, path, s, ruleLine)
}

// CleanPagePath drops what a page's address should not keep: the scheme and host of a
// full URL, the query string except its utm_* parameters (query strings carry emails,
// tokens and reset codes more often than anyone intends), and the fragment unless it
// is a single-page app's "#/" route.
func CleanPagePath(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.RequestURI()
		if u.Fragment != "" {
			s += "#" + u.Fragment
		}
	}
	path, frag, hasFrag := strings.Cut(s, "#")
	path = keepUTM(path)
	if hasFrag && strings.HasPrefix(frag, "/") {
		path += "#" + keepUTM(frag)
	}
	if path == "" {
		path = "/"
	}
	return path
}

// CleanReferrer is a referrer without its query string (but utm_* parameters) and
// fragment, or "" when it is not an http(s) URL or a path.
func CleanReferrer(s string) string {
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, "/") {
		return CleanPagePath(s)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	u.User, u.Fragment, u.RawFragment = nil, "", ""
	return keepUTM(u.String())
}

// keepUTM keeps of s's query string only its utm_* parameters, in their order.
func keepUTM(s string) string {
	base, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	var kept []string
	for _, kv := range strings.Split(query, "&") {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(strings.ToLower(k), "utm_") {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return base
	}
	return base + "?" + strings.Join(kept, "&")
}

// ReferrerHost is the host a referrer names ("" for a path or none): what the top
// referrers count.
func ReferrerHost(ref string) string {
	if strings.HasPrefix(ref, "/") || ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// isEntry: a view with no referrer, or one on another host than the page's, is where a
// visit entered the site.
func isEntry(ref, host string) bool {
	if ref == "" {
		return true
	}
	h := ReferrerHost(ref)
	if h == "" { // a path: inside the site
		return false
	}
	return host == "" || h != strings.TrimPrefix(strings.ToLower(host), "www.")
}

// OriginHost is the host of an Origin header's value ("" when it names none).
func OriginHost(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Hostname()
}

// PageViewQuery selects a project's page views, newest first.
type PageViewQuery struct {
	Project string
	UserID  string    // "" for every user
	Since   time.Time // zero: no lower bound (inclusive)
	Until   time.Time // zero: no upper bound (exclusive)
	Before  string    // a cursor from a previous page's Next
	Limit   int       // 1 to MaxPageViewsRead
}

// PageViewPage is one page of views; Next is the cursor of the following one ("" at the end).
type PageViewPage struct {
	Views []PageView
	Next  string
}

// PageStatsQuery asks the Pages view of a project for whole UTC days [From, To).
type PageStatsQuery struct {
	Project  string
	From, To time.Time // UTC midnights, From < To, at most MaxPageStatsDays apart
}

// PageDay is one UTC day of a project's page views.
type PageDay struct {
	Day   time.Time
	Views int64
	Users int64 // distinct users with a page view that day
}

// PageCount is one row of a top list: a path or a referrer's host, with its views.
type PageCount struct {
	Value string
	Views int64
}

// PageStats is the Pages view of a range: every day of it (days without views too),
// and the top pages, entry pages and referrers (by host) over it.
type PageStats struct {
	Days         []PageDay
	Views        int64
	Entries      int64
	TopPages     []PageCount // by views
	TopEntries   []PageCount // by views that entered the site
	TopReferrers []PageCount // hosts of the referrers of entries, by entries
}

// ActivityDay is one UTC day of a user's activity.
type ActivityDay struct {
	Day    time.Time
	Events int64
	Views  int64
}

// Activity is what a user's profile shows beyond the Person: sessions, activity by day
// since a time, and their most viewed pages.
type Activity struct {
	Sessions int64         // over all their activity
	Days     []ActivityDay // days since Since with activity, oldest first
	TopPages []PageCount   // at most TopPagesShown, most viewed first
}

// PageStore keeps page views and what is derived from them. Every method is scoped to
// one account.
type PageStore interface {
	// AddPageViews stores checked views (NewPageViews.Check) in one transaction,
	// creating their users and moving their last (or first) seen. Errors:
	// EProjectNotFound.
	AddPageViews(ctx context.Context, accountID int64, c *NewPageViews) error
	// ListPageViews returns page views newest first. Errors: EProjectNotFound,
	// EValidation for a cursor it did not give.
	ListPageViews(ctx context.Context, accountID int64, q PageViewQuery) (*PageViewPage, error)
	// PageStats answers the Pages view from daily counts. Errors: EProjectNotFound.
	PageStats(ctx context.Context, accountID int64, q PageStatsQuery) (*PageStats, error)
	// UserActivity returns a user's sessions, activity by day since since, and top
	// pages. Errors: EProjectNotFound, ENotFound.
	UserActivity(ctx context.Context, accountID int64, project, userID string, since time.Time) (*Activity, error)
	// SetIgnoreGPC sets whether the project records visitors whose browser signals
	// Global Privacy Control (false, the default: it does not). Errors: EProjectNotFound.
	SetIgnoreGPC(ctx context.Context, accountID int64, project string, ignore bool) error
}

// CountSessions is how many sessions sorted, distinct activity minutes (unix minutes,
// ascending) make: a new one starts after a gap of more than SessionGapMinutes.
func CountSessions(minutes []int64) int64 {
	var n int64
	for i, m := range minutes {
		if i == 0 || m-minutes[i-1] > SessionGapMinutes {
			n++
		}
	}
	return n
}
