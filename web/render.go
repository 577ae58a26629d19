package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tidings-dev/tidings"
)

//go:embed templates
var templateFS embed.FS

// pages holds one template set per page, each the layout plus the page.
type pages struct {
	byName map[string]*template.Template
	raw    *template.Template // fragments and non-HTML documents (event card, manifest)
}

func loadPages(a *assets, now func() time.Time) (*pages, error) {
	funcs := template.FuncMap{
		"asset":          a.url,
		"reltime":        func(t time.Time) string { return reltime(t, now()) },
		"exact":          func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"iso":            func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"initial":        initial,
		"nameRule":       func() string { return tidings.NameRuleMessage },
		"ms":             func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" },
		"sub":            func(a, b int) int { return a - b },
		"plural":         plural,
		"clock":          func(t time.Time) string { return t.UTC().Format("2 Jan 15:04") },
		"maxViews":       func() string { return thousands(tidings.MaxPageViewsRead) },
		"bucketChoices":  func() []choice { return bucketChoices },
		"displayChoices": func() []choice { return displayChoices },
		"rangeChoices":   func() []choice { return rangeChoices },
		"routeChoices":   func() []choice { return routeChoices },
		"digestChoices":  func() []choice { return digestChoices },
		"thousandsOf":    thousands,
		"countOf":        countOf,
		"hasSuffix":      strings.HasSuffix, // a page's title names its settings tab: "my-saas · Projects"
		"crumbs":         crumbs,
	}
	common, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/fragments.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	if p.raw, err = common.Clone(); err != nil {
		return nil, err
	}
	if _, err := p.raw.ParseFS(templateFS, "templates/manifest.json"); err != nil {
		return nil, err
	}
	entries, err := templateFS.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "page_") {
			continue
		}
		t, err := common.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name); err != nil {
			return nil, err
		}
		p.byName[strings.TrimSuffix(strings.TrimPrefix(name, "page_"), ".html")] = t
	}
	return p, nil
}

// view is what every page template receives.
type view struct {
	Title    string
	User     *tidings.User
	Account  *tidings.Account
	Projects []*sidebarProject
	Project  string // current project, if any
	Channel  string // current channel, if any
	Section  string // "feed", "insights", "charts", "settings"
	Tab      string // the settings tab of a page below it ("api" for a token's page)
	Owner    bool
	Status   int
	Error    string // a problem with the submitted form
	Focus    string // the id of the field to fix (sign-in pages); "" for the first
	Flash    *flash // what the form before this page left to show once
	Data     any
}

// render writes a page with the layout; sidebar data is loaded for signed-in users.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, v *view) error {
	t, ok := s.pages.byName[name]
	if !ok {
		return errors.New("web: no page " + name)
	}
	if sess := sessionFrom(r); sess != nil && v.User == nil {
		v.User, v.Account, v.Owner = sess.user, sess.account, sess.user.Role == tidings.UserOwner
		if err := s.loadSidebar(r, v); err != nil {
			return err
		}
		s.rememberProject(w, r, v.Project)
		if v.Flash == nil && r.Method == http.MethodGet {
			v.Flash = s.takeFlash(w, r)
		}
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if v.Status != 0 {
		w.WriteHeader(v.Status)
	}
	_, err := w.Write(b.Bytes())
	return err
}

var errNotFound = tidings.Errorf(tidings.ENotFound, "There is nothing here.")

// wrap turns an error of a handler into an error page; internal details go to the log.
// pageWriteTimeout bounds the writing of one dashboard answer.
const pageWriteTimeout = 30 * time.Second

func (s *Server) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer has a write deadline (the server has none, for the live
		// streams, which set their own per write): a client that never reads cannot
		// hold a page's memory and a connection for long.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(pageWriteTimeout))
		err := h(w, r)
		if err == nil {
			return
		}
		code := tidings.ErrorCode(err)
		status := tidings.HTTPStatus(code) // the same as the API's
		switch code {
		case tidings.EProjectNotFound, tidings.EChannelNotFound:
			// Said of the signed-in account: another account's project is simply not
			// there, never said to exist.
			s.renderError(w, r, status, missingMessage(r, code))
			return
		case tidings.ENotFound:
			msg := tidings.ErrorMessage(err)
			if msg == "" {
				msg = errNotFound.Message
			}
			s.renderError(w, r, status, strings.ToUpper(msg[:1])+msg[1:])
			return
		case tidings.EUnavailable:
			w.Header().Set("Retry-After", "5")
		}
		if status == http.StatusInternalServerError {
			// The request id is on the answer (set by the middleware): the page shows
			// it, and the log line has it, so that a report finds the cause.
			id := w.Header().Get("X-Request-Id")
			s.log.ErrorContext(r.Context(), "dashboard error", "err", err, "route", r.Pattern, "request_id", id)
			msg := "Something went wrong on our side. Try again in a moment."
			if id != "" {
				msg += " If it goes on, tell your administrator this request id: " + id + "."
			}
			s.renderError(w, r, status, msg)
			return
		}
		s.renderError(w, r, status, tidings.ErrorMessage(err))
	})
}

// errorData is what an error page offers beside its message: where to go next.
type errorData struct {
	Message string
	Links   []errorLink
}

type errorLink struct{ URL, Text string }

// renderError shows an error inside the app shell (navigation, sign-out) when the
// visitor is signed in, saying what is missing and what to do.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if sessionFrom(r) == nil {
		if sess, err := s.loadSession(r); err == nil && sess != nil {
			r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess))
		}
	}
	d := errorData{Message: msg}
	sess := sessionFrom(r)
	switch {
	case status == http.StatusNotFound && strings.HasPrefix(msg, "There is no project") && sess != nil && sess.user.Role == tidings.UserOwner:
		d.Links = append(d.Links, errorLink{"/settings/projects", "Create it in Settings → Projects"})
	case strings.Contains(msg, "invitation"):
		d.Links = append(d.Links, errorLink{"/login", "Sign in"})
	}
	if sess != nil {
		d.Links = append(d.Links, errorLink{"/", "Back to the dashboard"})
	} else if len(d.Links) == 0 {
		d.Links = append(d.Links, errorLink{"/login", "Sign in"})
	}
	title := map[int]string{http.StatusNotFound: "Not found", http.StatusForbidden: "Not allowed", http.StatusBadRequest: "Cannot do that",
		http.StatusConflict: "Cannot do that", http.StatusTooManyRequests: "Too many attempts", http.StatusServiceUnavailable: "Busy, or down for a moment"}[status]
	if title == "" {
		title = http.StatusText(status)
	}
	if err := s.render(w, r, "error", &view{Title: title, Status: status, Data: d}); err != nil {
		http.Error(w, msg, status)
	}
}

// missingMessage says which project or channel of the URL does not exist.
func missingMessage(r *http.Request, code string) string {
	project, channel := r.PathValue("project"), r.PathValue("channel")
	switch {
	case code == tidings.EChannelNotFound && channel != "":
		return "There is no channel “#" + channel + "” in the project “" + project + "”. An owner creates it in Settings → Projects, or the first event creates it when the project allows that."
	case project != "":
		return "There is no project “" + project + "” in your team."
	}
	return errNotFound.Message
}

// redirect answers a form with 303 See Other, so that reloading does not send it again.
func redirect(w http.ResponseWriter, r *http.Request, to string) error {
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// reltime is "5 min ago"; the browser refreshes it (app.js) from the datetime attribute.
func reltime(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min ago"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h ago"
	case d < 30*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24)) + " d ago"
	}
	return t.UTC().Format("2 Jan 2006")
}

func itoa(n int) string { return strconv.Itoa(n) }

// focusFor is the field a sign-in page's error is about, by its id: the cursor goes
// there, so the person fixes it without reaching for the mouse.
func focusFor(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.HasPrefix(m, "team name") || strings.Contains(m, "team name is taken"):
		return "account"
	case strings.Contains(m, "wrong email or password"), strings.Contains(m, "password"):
		return "password"
	case strings.Contains(m, "email"):
		return "email"
	}
	return ""
}

// initial is the first letter of a name, upper-cased: the mark of an event without an icon.
func initial(name string) string {
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return strings.ToUpper(string(r))
		}
	}
	return "·"
}

// thousands writes n with thousands separators: 1,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
