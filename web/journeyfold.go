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
	Count  int                // views in the fold
	Views  []tidings.PageView // the ones listed, at most foldListed
	More   int                // Count - len(Views)
	Newest time.Time
	// Many: the page's MaxPageViewsRead ran out in this fold: there are more than
	// Count, and older views are not folded in.
	Many bool
}

// journeyItem is an event card or a fold of page views.
type journeyItem struct {
	Card eventView
	Fold *viewFold
}

// foldListed bounds the views one fold lists.
const foldListed = 100

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
	vi := 0
	take := func(after time.Time, all bool) {
		start := vi
		for vi < len(views) && (all || views[vi].Timestamp.After(after)) {
			vi++
		}
		if vi == start {
			return
		}
		f := &viewFold{Count: vi - start, Newest: views[start].Timestamp, Views: views[start:min(vi, start+foldListed)]}
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
