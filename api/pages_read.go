package api

import (
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// pageSettingsJSON is what ls.js asks before it records a visitor whose browser
// signals Global Privacy Control.
type pageSettingsJSON struct {
	Project   string `json:"project"`
	IgnoreGPC bool   `json:"ignore_gpc"`
}

// handlePageSettings answers a project's page view settings: GET /v1/page/settings?project=P.
// Public or full tokens (ls.js has a public one); only the project limit applies.
func (s *Server) handlePageSettings(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	project := r.URL.Query().Get("project")
	if err := tidings.ValidateName("project", project); err != nil {
		return err
	}
	if tok.Project != "" && project != tok.Project {
		return tidings.Errorf(tidings.EForbidden, "this token is limited to project %q", tok.Project)
	}
	p, err := s.store.FindProject(r.Context(), tok.AccountID, project)
	if err != nil {
		return err
	}
	return writeJSON(w, pageSettingsJSON{Project: p.Name, IgnoreGPC: p.IgnoreGPC})
}

// pageViewJSON is a page view as GET /v1/pages shows it; timestamp in unix seconds, as
// events'.
type pageViewJSON struct {
	UserID    string `json:"user_id"`
	Path      string `json:"path"`
	Title     string `json:"title"`
	Referrer  string `json:"referrer"`
	Timestamp int64  `json:"timestamp"`
}

// handlePages lists a project's page views, newest first:
// GET /v1/pages?project=P[&user_id=U][&before=NEXT][&limit=N].
func (s *Server) handlePages(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	var p tidings.Problems
	q := tidings.PageViewQuery{Project: v.Get("project"), UserID: v.Get("user_id"), Before: v.Get("before")}
	tidings.CheckName(&p, "project", q.Project)
	if v.Has("user_id") {
		switch n := utf8.RuneCountInString(q.UserID); {
		case n == 0:
			p.Add("user_id", "required", "must not be empty when sent")
		case n > tidings.MaxUserIDLen:
			p.Add("user_id", "too_long", "must be at most %d characters (got %d)", tidings.MaxUserIDLen, n)
		}
	}
	if v.Has("before") && q.Before == "" {
		p.Add("before", "cursor", "must be the next of a previous page")
	}
	q.Limit = tidings.DefaultPageViews
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > tidings.MaxPageViewsPage {
			p.Add("limit", "range", "must be a whole number from 1 to %d", tidings.MaxPageViewsPage)
		}
		q.Limit = n
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := allowReadWhole(tok, q.Project, "page views belong to no channel"); err != nil {
		return err
	}
	page, err := s.store.ListPageViews(r.Context(), tok.AccountID, q)
	if err != nil {
		return err
	}
	out := struct {
		PageViews []pageViewJSON `json:"page_views"`
		Next      *string        `json:"next"`
	}{PageViews: make([]pageViewJSON, len(page.Views))}
	for i, pv := range page.Views {
		out.PageViews[i] = pageViewJSON{pv.UserID, pv.Path, pv.Title, pv.Referrer, pv.Timestamp.Unix()}
	}
	if page.Next != "" {
		out.Next = &page.Next
	}
	return writeJSON(w, out)
}
