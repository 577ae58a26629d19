package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tidings-dev/tidings"
)

// The Pages view of a project: what ls.js recorded — page views and unique users per
// day, the top pages, entry pages and referrers — over a range of whole UTC days, all
// answered from the store's daily counts (PageStats), never by reading the views.

// pageRange is a choice of the Pages view's range picker.
type pageRange struct {
	Value, Text string
	days        int // 0: twelve months back from tomorrow
}

var pageRanges = []pageRange{{"7d", "7 days", 7}, {"30d", "30 days", 30}, {"90d", "90 days", 90}, {"12m", "12 months", 0}}

const defaultPageRange = "30d"

// span is the range's whole UTC days [from, to), the last being today's.
func (pr pageRange) span(now time.Time) (from, to time.Time) {
	to = now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	if pr.days == 0 {
		return to.AddDate(-1, 0, 0), to
	}
	return to.AddDate(0, 0, -pr.days), to
}

type pageRow struct {
	Value string
	Views int64
	Share int // of the top row's views, in percent: the row's bar
}

// topTable is one top list: its rows and what its columns and its emptiness say.
type topTable struct {
	Rows               []pageRow
	Head, Count, Empty string
}

type pagesData struct {
	Ranges       []rangeLink
	RangeText    string
	Error        string // the range asked for is not one of the picker's
	Stats        *tidings.PageStats
	Chart        drawnDaily
	Users        int64 // the busiest day's unique users
	TopPages     topTable
	TopEntries   topTable
	TopReferrers topTable
	NeverViewed  bool // the project has no page view at all: how to add the script
	Snippet      string
	Origin       string
}

func pageRows(counts []tidings.PageCount) []pageRow {
	var out []pageRow
	for _, c := range counts {
		share := 100
		if top := counts[0].Views; top > 0 {
			share = int(c.Views * 100 / top)
		}
		out = append(out, pageRow{Value: c.Value, Views: c.Views, Share: max(share, 1)})
	}
	return out
}

// pagesPage is GET /p/{project}/pages[?range=7d|30d|90d|12m].
func (s *Server) pagesPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	acc := sessionFrom(r).account.ID
	asked := r.URL.Query().Get("range")
	if asked == "" {
		asked = defaultPageRange
	}
	d := pagesData{}
	status := http.StatusOK
	var pr pageRange
	for _, c := range pageRanges {
		if c.Value == asked {
			pr = c
		}
	}
	if pr.Value == "" {
		d.Error = "Unknown range “" + cut(asked, 40) + "”: pick 7 days, 30 days, 90 days or 12 months. The page shows the last 30 days."
		status = http.StatusBadRequest
		pr = pageRanges[1]
	}
	for _, c := range pageRanges {
		u := "/p/" + project + "/pages"
		if c.Value != defaultPageRange {
			u += "?" + url.Values{"range": {c.Value}}.Encode()
		}
		d.Ranges = append(d.Ranges, rangeLink{Text: c.Text, URL: u, Current: c.Value == pr.Value})
	}
	d.RangeText = pr.Text
	from, to := pr.span(s.now())
	st, err := s.store.PageStats(r.Context(), acc, tidings.PageStatsQuery{Project: project, From: from, To: to})
	if err != nil {
		return err
	}
	d.Stats = st
	if st.Views == 0 {
		// Nothing in the range: is there anything at all? One view says.
		any, err := s.store.ListPageViews(r.Context(), acc, tidings.PageViewQuery{Project: project, Limit: 1})
		if err != nil {
			return err
		}
		if len(any.Views) == 0 {
			d.NeverViewed, d.Origin = true, s.baseURL(r)
			d.Snippet = lsSnippet(d.Origin, project)
		}
	}
	c := dailyChart{What: "Page views and unique users of " + project,
		Empty: "No page views in the last " + pr.Text + ". Try a longer range."}
	views := dailySeries{Name: "Page views", Noun: "page view", Class: "s0"}
	users := dailySeries{Name: "Unique users", Noun: "user", Class: "s1", Line: true}
	for _, day := range st.Days {
		c.Days = append(c.Days, day.Day.UTC())
		views.Values = append(views.Values, day.Views)
		users.Values = append(users.Values, day.Users)
		d.Users = max(d.Users, day.Users)
	}
	c.Series = []dailySeries{views, users}
	d.Chart = c.draw()
	d.TopPages = topTable{Rows: pageRows(st.TopPages), Head: "Page", Count: "Views", Empty: "No page views in this range."}
	d.TopEntries = topTable{Rows: pageRows(st.TopEntries), Head: "Page", Count: "Entries", Empty: "No entries in this range."}
	d.TopReferrers = topTable{Rows: pageRows(st.TopReferrers), Head: "Site", Count: "Entries", Empty: "No visitor came from another site in this range."}
	return s.render(w, r, "pages", &view{Title: project + " pages", Project: project, Section: "pages", Status: status, Data: d})
}

// lsSnippet is what a site adds to record page views: the script, its configuration
// with a public token, and the user id once known (page views are recorded from then on).
func lsSnippet(origin, project string) string {
	return `<script id="logsnag-script" async src="` + origin + `/ls.js"></script>
<script>
  window.lsq = window.lsq || [];
  window.ls = window.ls || ((...args) => window.lsq.push(args));
  window.ls("setConfig", "YOUR_PUBLIC_TOKEN", "` + project + `");
  window.ls("setUserId", "user-42"); // once the visitor is known
</script>`
}
