package web

import (
	"net/http"
	"time"

	"github.com/tidings-dev/tidings"
)

// A user's journey folds their page views between their events: "Viewed 5 pages",
// opened to list them. One page of the journey reads at most MaxPageViewsRead views,
// those between its oldest event and the page before it; beyond, it says "many".

// viewFold is the page views between two events of a journey, newest first.
type viewFold struct {
	Count  int          // views in the fold
	Views  []foldedView // the ones listed (foldListed, pageListed)
	More   int          // Count - len(Views)
	Newest time.Time
	// Many: the page's MaxPageViewsRead ran out in this fold: there are more than
	// Count, and older views are not folded in.
	Many bool
}

// foldedView is a listed view, its path and title cut to be read at a glance.
type foldedView struct {
	Timestamp   time.Time
	Path, Title string
}

// journeyItem is an event card or a fold of page views.
type journeyItem struct {
	Card eventView
	Fold *viewFold
}

// A page of a journey lists at most pageListed views, foldListed in one fold, each
// path cut at foldPathRunes and title at foldTitleRunes: the page's size is bounded
// whatever the views (MaxPageViewsRead of 1,024-character paths).
const (
	foldListed     = 50
	pageListed     = 150
	foldPathRunes  = 160
	foldTitleRunes = 80
)

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// foldPageViews reads the user's page views of j's time span — from its oldest
// event (when older pages follow) to the oldest event of the page before it (when
// this is not the first) — and folds them between j's cards.
func (s *Server) foldPageViews(r *http.Request, account int64, project, userID string, j *journey) error {
	q := tidings.PageViewQuery{Project: project, UserID: userID, Limit: tidings.MaxPageViewsRead}
	if before := r.URL.Query().Get("before"); before != "" {
		ev, err := s.store.FindEvent(r.Context(), account, project, before)
		switch {
		case err == nil:
			q.Until = ev.Timestamp
		case tidings.ErrorCode(err) != tidings.ENotFound:
			return err
		default: // deleted since: the time its ID says
			t, ok := tidings.EventIDTime(before)
			if !ok {
				return nil
			}
			q.Until = t
		}
	}
	if j.Older != "" && len(j.Cards) > 0 {
		q.Since = j.Cards[len(j.Cards)-1].Time
	}
	if !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return nil // events out of time order: no span to fold
	}
	page, err := s.store.ListPageViews(r.Context(), account, q)
	if err != nil {
		return err
	}
	j.Items = foldViews(j.Cards, page.Views, page.Next != "")
	return nil
}

// foldViews puts views (newest first) between cards (newest first): before each
// card, the views after its time. truncated says views older than the last one exist
// in the span but were not read.
func foldViews(cards []eventView, views []tidings.PageView, truncated bool) []journeyItem {
	items := make([]journeyItem, 0, 2*len(cards)+1)
	vi, listed := 0, 0
	take := func(after time.Time, all bool) {
		start := vi
		for vi < len(views) && (all || views[vi].Timestamp.After(after)) {
			vi++
		}
		if vi == start {
			return
		}
		f := &viewFold{Count: vi - start, Newest: views[start].Timestamp}
		for _, v := range views[start:min(vi, start+foldListed, start+pageListed-listed)] {
			f.Views = append(f.Views, foldedView{Timestamp: v.Timestamp, Path: cut(v.Path, foldPathRunes), Title: cut(v.Title, foldTitleRunes)})
		}
		listed += len(f.Views)
		f.More = f.Count - len(f.Views)
		f.Many = truncated && vi == len(views)
		items = append(items, journeyItem{Fold: f})
	}
	for _, c := range cards {
		take(c.Time, false)
		items = append(items, journeyItem{Card: c})
	}
	take(time.Time{}, true)
	return items
}
