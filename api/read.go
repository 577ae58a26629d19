package api

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/export"
)

// handleEvents lists events: GET /v1/events?project=P[&channel=C][&tag=k:v…][&q=…][&before=ID][&limit=N].
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	q, err := parseEventQuery(r, s.now())
	if err != nil {
		return err
	}
	if err := tok.AllowRead(q.Project, q.Channel); err != nil {
		return err
	}
	page, err := s.store.ListEvents(r.Context(), tok.AccountID, q)
	if err != nil {
		return err
	}
	out := struct {
		Events []tidings.EventJSON `json:"events"`
		Next   *string             `json:"next"`
	}{Events: make([]tidings.EventJSON, len(page.Events))}
	for i, ev := range page.Events {
		out.Events[i] = eventOut(ev)
	}
	if page.Next != "" {
		out.Next = &page.Next
	}
	return writeJSON(w, out)
}

func parseEventQuery(r *http.Request, now time.Time) (tidings.EventQuery, error) {
	v := r.URL.Query()
	var p tidings.Problems
	q := tidings.EventQuery{Project: v.Get("project"), Channel: v.Get("channel"), Before: v.Get("before")}
	tidings.CheckName(&p, "project", q.Project)
	if q.Channel != "" {
		tidings.CheckName(&p, "channel", q.Channel)
	}
	q.Tags = pairs(v, "tag", &p)
	search, err := tidings.ParseSearch(v.Get("q"), now) // "since:7d" is of the injected clock
	var perr *tidings.Error
	if errors.As(err, &perr) {
		p = append(p, perr.Fields...)
	}
	if !q.AddSearch(search) {
		p.Add("q", "channel", "q's channel:%s and channel=%s name different channels: give one", search.Channel, v.Get("channel"))
	}
	q.Limit = limit(v, &p)
	return q, p.Err()
}

// pairs reads the repeatable key:value parameter name (tag=, property=).
func pairs(v url.Values, name string, p *tidings.Problems) []tidings.Tag {
	var out []tidings.Tag
	for _, t := range v[name] {
		key, value, ok := strings.Cut(t, ":")
		if !ok || !tidings.ValidName(key) {
			p.Add(name, "format", "must be key:value with a key like plan (got %q)", t)
			continue
		}
		out = append(out, tidings.Tag{Key: key, Value: value})
	}
	return out
}

// limit reads a page's size: 1 to 100, default 50.
func limit(v url.Values, p *tidings.Problems) int {
	l := v.Get("limit")
	if l == "" {
		return 50
	}
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 || n > 100 {
		p.Add("limit", "range", "must be a whole number from 1 to 100")
	}
	return n
}

// handleInsights lists a project's insights by title, a page at a time:
// GET /v1/insights?project=P[&after=NEXT][&limit=N].
func (s *Server) handleInsights(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	q := tidings.InsightQuery{Project: v.Get("project"), After: v.Get("after"), Limit: tidings.DefaultInsightPage}
	var p tidings.Problems
	tidings.CheckName(&p, "project", q.Project)
	if v.Has("limit") {
		q.Limit = limit(v, &p)
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := tok.AllowRead(q.Project, tok.Channel); err != nil {
		return err
	}
	page, err := s.store.PageInsights(r.Context(), tok.AccountID, q)
	if err != nil {
		return err
	}
	out := struct {
		Insights []insightJSON `json:"insights"`
		Next     *string       `json:"next"`
	}{Insights: make([]insightJSON, len(page.Insights))}
	for i, in := range page.Insights {
		out.Insights[i] = insightOut(in)
	}
	if page.Next != "" {
		out.Next = &page.Next
	}
	return writeJSON(w, out)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, map[string]string{"status": "ok"})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.Ping(r.Context()); err != nil {
		return err
	}
	return writeJSON(w, map[string]string{"status": "ready"})
}

// handleExport streams a project's events, filtered like GET /v1/events, as NDJSON or
// CSV: GET /v1/events/export?project=P[&format=csv][&channel=…][&tag=…][&q=…].
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	q, err := parseEventQuery(r, s.now())
	if err != nil {
		return err
	}
	format, err := export.CheckFormat(r.URL.Query().Get("format"))
	if err != nil {
		return err
	}
	if err := tok.AllowRead(q.Project, q.Channel); err != nil {
		return err
	}
	return export.Serve(w, r, s.store, tok.AccountID, q, format, s.log)
}
