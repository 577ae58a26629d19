package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/clientip"
)

// Page views (POST /v1/page) are what ls.js records once a user id is set. They are
// not events: never notified, no webhooks, no feed, no Idempotency-Key.

var (
	pageFields = fieldOrder{"project", "user_id", "path", "title", "referrer", "timestamp", "views"}
	viewFields = fieldOrder{"user_id", "path", "title", "referrer", "timestamp"}
	// batchFields is what a batch's body may hold, for its unknown-field message.
	batchFields = "project, views (each view: " + viewFields.String() + ")"
)

// decodePage turns a /v1/page body, one view or {"project","views":[…]}, into checked
// views, reporting every problem at once. host is the page's (from Origin).
func decodePage(body []byte, host string, now time.Time) (*tidings.NewPageViews, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	c := &tidings.NewPageViews{Project: f.required("project"), Host: host}
	raw, batch := f.get("views")
	if batch {
		c.Views = decodeViews(raw, &p)
		f.rejectUnknown(batchFields)
	} else {
		c.Views = []tidings.PageView{decodeView(f, &p)}
		f.rejectUnknown(pageFields.String())
	}
	if !p.Has("views") { // a wrong array says it all; its views are not looked at
		c.Check(&p, now, batch)
	}
	// A view that is not an object is said once, not again for each field it lacks.
	broken := map[string]bool{}
	for _, f := range p {
		if strings.HasPrefix(f.Path, "views.") && strings.Count(f.Path, ".") == 1 {
			broken[f.Path+"."] = true
		}
	}
	p = slices.DeleteFunc(p, func(f tidings.FieldError) bool {
		view, _, _ := strings.Cut(strings.TrimPrefix(f.Path, "views."), ".")
		return broken["views."+view+"."] && strings.Count(f.Path, ".") > 1
	})
	sortPageProblems(p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeViews reads a batch's array of views. One longer than MaxPageViewsPerCall is
// refused before any of its elements is read.
func decodeViews(raw json.RawMessage, p *tidings.Problems) []tidings.PageView {
	if raw[0] != '[' {
		p.Add("views", "type", "must be an array of page views")
		return nil
	}
	elems := splitArray(raw)
	switch n := len(elems); {
	case n == 0:
		p.Add("views", "required", "must hold at least one page view")
		return nil
	case n > tidings.MaxPageViewsPerCall:
		p.Add("views", "too_many", "at most %d page views are allowed in one call (got %d): send the others in further calls",
			tidings.MaxPageViewsPerCall, n)
		return nil
	}
	views := make([]tidings.PageView, len(elems))
	for i, el := range elems {
		at := "views." + strconv.Itoa(i)
		if el[0] != '{' {
			p.Add(at, "type", "must be an object: {\"user_id\",\"path\",\"title\"?,\"referrer\"?,\"timestamp\"?}")
			continue
		}
		obj, err := decodeObject(el)
		if err != nil { // a key sent twice in it
			p.Add(at, "invalid", "%s", tidings.ErrorMessage(err))
			continue
		}
		f := newFields(obj, at+".", p)
		views[i] = decodeView(f, p)
		f.rejectUnknown(viewFields.String())
	}
	return views
}

// decodeView reads one view's fields; Check says what is missing.
func decodeView(f *fields, p *tidings.Problems) tidings.PageView {
	var v tidings.PageView
	v.UserID, _ = f.str("user_id")
	v.Path, _ = f.str("path")
	v.Title, _ = f.str("title")
	v.Referrer, _ = f.str("referrer")
	if raw, ok := f.get("timestamp"); ok {
		v.Timestamp = decodeTimestampAt(raw, p, f.path("timestamp"))
	}
	return v
}

// sortPageProblems orders problems as the body reads: by field, a batch's by view and
// then by field.
func sortPageProblems(p tidings.Problems) {
	rank := func(order fieldOrder, name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	key := func(path string) (root, view, field int) {
		first, rest, _ := strings.Cut(path, ".")
		root, view = rank(pageFields, first), -1
		if first == "views" && rest != "" {
			idx, name, _ := strings.Cut(rest, ".")
			view, _ = strconv.Atoi(idx)
			field = rank(viewFields, name)
		}
		return root, view, field
	}
	sort.SliceStable(p, func(i, j int) bool {
		ri, vi, fi := key(p[i].Path)
		rj, vj, fj := key(p[j].Path)
		if ri != rj {
			return ri < rj
		}
		if vi != vj {
			return vi < vj
		}
		return fi < fj
	})
}

// allowPages checks that the token may record the project's page views: the log role
// and the project limit. Page views belong to no channel, so a token limited to one
// may not record them.
func allowPages(tok *tidings.Token, project string) error {
	if err := tok.AllowPublish(tidings.RoleLog, project, tok.Channel); err != nil {
		return err
	}
	if tok.Channel != "" {
		return tidings.Errorf(tidings.EForbidden,
			"this token is limited to channel %q; page views belong to no channel: use a token limited to project %q only", tok.Channel, tok.Project)
	}
	return nil
}

// pageAnswer is POST /v1/page's answer.
type pageAnswer struct {
	Stored int  `json:"stored"`
	GPC    bool `json:"gpc,omitempty"` // nothing stored: the visitor's browser signals Global Privacy Control
	// RateLimited is how many of the call's views the rate limits refused (the last
	// ones): they were not stored.
	RateLimited int `json:"rate_limited,omitempty"`
}

// signalsGPC reports whether the request carries the browser's Global Privacy Control signal.
func signalsGPC(r *http.Request) bool { return strings.TrimSpace(r.Header.Get("Sec-GPC")) == "1" }

// handlePage records one page view or up to MaxPageViewsPerCall: POST /v1/page.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	if r.Header.Get("Idempotency-Key") != "" {
		// Views are not kept under keys: a client that thinks its retry is safe must hear so.
		return tidings.Errorf(tidings.EValidation, "POST /v1/page takes no Idempotency-Key: page views are not kept under keys, so send each call once")
	}
	body, err := readBody(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	now := s.now()
	c, err := decodePage(body, tidings.OriginHost(r.Header.Get("Origin")), now)
	if err != nil {
		return err
	}
	if err := allowPages(tok, c.Project); err != nil {
		return err
	}
	if signalsGPC(r) {
		p, err := s.store.FindProject(r.Context(), tok.AccountID, c.Project)
		if err != nil {
			return err
		}
		if !p.IgnoreGPC {
			return writeJSON(w, pageAnswer{GPC: true})
		}
	}
	// As a batch's events: the request spent one from the rate limits, each further
	// view spends one, and those past the limits are not stored.
	refused := 0
	if n := len(c.Views); n > 1 {
		allowed, _ := s.limits.allowN(w, tok, clientip.Of(r, s.trusted), now, n-1)
		refused = n - 1 - allowed
		c.Views = c.Views[:allowed+1]
	}
	if err := s.store.AddPageViews(r.Context(), tok.AccountID, c); err != nil {
		return err
	}
	return writeJSON(w, pageAnswer{Stored: len(c.Views), RateLimited: refused})
}
