package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/tidings-dev/tidings"
)

type tokensData struct {
	Tokens   []*tidings.Token // active, newest first
	Revoked  []*tidings.Token // folded away under "show revoked"
	Projects []projectRow     // with their channels, for the limit menus
	Created  *createdToken    // the token just made: its secret is shown this once
	Form     tokenForm
	Open     bool // the "Create a token" form is shown open: no token yet, or it was refused
}

type tokenForm struct {
	Name, Access, Project, Channel string
	Log, Insight                   bool
	current                        bool // a fresh form: Project is the one the person came from (currentProject)
}

type createdToken struct {
	Secret  string
	Token   *tidings.Token
	Example string // a ready shell snippet: the secret in $TIDINGS_TOKEN, and a curl that uses it
}

func (s *Server) tokensPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderTokens(w, r, http.StatusOK, "", s.takeFlash(w, r), tokenForm{Access: tidings.AccessFull, Log: true, Insight: true, current: true})
}

// renderTokens shows the tokens page; fl may carry the secret of the token just made.
func (s *Server) renderTokens(w http.ResponseWriter, r *http.Request, status int, msg string, fl *flash, f tokenForm) error {
	id := sessionFrom(r).account.ID
	ts, err := s.store.ListTokens(r.Context(), id)
	if err != nil {
		return err
	}
	var created *createdToken
	if fl != nil && fl.Token != "" {
		for _, t := range ts {
			if t.ID == fl.TokenID {
				created = &createdToken{Secret: fl.Token, Token: t, Example: s.curlExample(r, t, fl.Token)}
			}
		}
	}
	rows, err := s.projectChoices(r.Context(), id)
	if err != nil {
		return err
	}
	if f.current {
		f.Project = s.currentProject(r, rows)
	}
	// Newest first: the one just made is on top.
	slices.Reverse(ts)
	var active, revoked []*tidings.Token
	for _, t := range ts {
		if t.Revoked() {
			revoked = append(revoked, t)
		} else {
			active = append(active, t)
		}
	}
	if fl == nil {
		fl = &flash{} // taken here: the layout does not take it again
	}
	return s.render(w, r, "tokens", &view{Title: "API tokens", Tab: "api", Section: "settings", Status: status, Error: msg, Flash: fl,
		Data: tokensData{Tokens: active, Revoked: revoked, Projects: rows, Created: created, Form: f, Open: msg != "" || len(ts) == 0}})
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	f := tokenForm{Name: strings.TrimSpace(r.PostFormValue("name")), Access: r.PostFormValue("access"),
		Project: r.PostFormValue("project"), Channel: formChannel(r),
		Log: r.PostFormValue("role_log") != "", Insight: r.PostFormValue("role_insight") != ""}
	var roles []string
	if f.Log {
		roles = append(roles, tidings.RoleLog)
	}
	if f.Insight {
		roles = append(roles, tidings.RoleInsight)
	}
	id, secret, hash := tidings.NewTokenSecret()
	t := &tidings.Token{ID: id, AccountID: sessionFrom(r).account.ID, Name: f.Name, Access: f.Access,
		Project: f.Project, Channel: f.Channel, Roles: roles, Hash: hash}
	if err := s.store.CreateToken(r.Context(), t); err != nil {
		switch tidings.ErrorCode(err) {
		case tidings.EValidation, tidings.EProjectNotFound, tidings.EChannelNotFound:
			return s.renderTokens(w, r, http.StatusBadRequest, tidings.ErrorMessage(err), nil, f)
		}
		return err
	}
	// Shown once by the page the browser is sent to: a reload does not make another.
	if err := s.setFlash(w, r, flash{Token: secret, TokenID: t.ID}); err != nil {
		return err
	}
	// To the card, which the page scrolls below the sticky header (app.js, app.css).
	return redirect(w, r, "/settings/api#token-created")
}

// curlExample is a snippet that works as it is with the new token: the secret goes
// into $TIDINGS_TOKEN, the one name the README and the empty feed use too.
func (s *Server) curlExample(r *http.Request, t *tidings.Token, secret string) string {
	base := s.baseURL(r)
	project, channel := t.Project, t.Channel
	if project == "" {
		project = "my-saas"
	}
	if channel == "" {
		channel = "payments"
	}
	export := "export TIDINGS_TOKEN=" + secret + "\n"
	if !t.HasRole(tidings.RoleLog) {
		return export + "curl -X POST " + base + "/v1/insight \\\n  -H \"Authorization: Bearer $TIDINGS_TOKEN\" \\\n" +
			"  -H 'Content-Type: application/json' \\\n  -d '{\"project\":\"" + project +
			"\",\"title\":\"Signups\",\"value\":1,\"change\":\"increment\",\"icon\":\"🎉\"}'"
	}
	return export + s.firstEventExample(r, project, channel)
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if s.flushUse != nil {
		// Uses not yet written (they are batched) land first: the revoked row shows its last use.
		if err := s.flushUse(r.Context()); err != nil {
			s.log.Warn("recording token use before a revoke", "err", err)
		}
	}
	if err := s.store.RevokeToken(r.Context(), sessionFrom(r).account.ID, r.PathValue("id"), s.now()); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/api", "Token "+r.PathValue("id")+" revoked: requests using it are refused from now on.")
}

// baseURL is how examples name this server: --public-url's, or the request's.
func (s *Server) baseURL(r *http.Request) string {
	if s.apiBase != "" {
		return s.apiBase
	}
	scheme := "http"
	if s.isHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// firstEventExample is the command an empty feed offers: a curl that publishes to
// it, with the token in $TIDINGS_TOKEN.
func (s *Server) firstEventExample(r *http.Request, project, channel string) string {
	return "curl -X POST " + s.baseURL(r) + "/v1/log \\\n  -H \"Authorization: Bearer $TIDINGS_TOKEN\" \\\n" +
		"  -H 'Content-Type: application/json' \\\n  -d '{\"project\":\"" + project + "\",\"channel\":\"" + channel +
		"\",\"event\":\"Hello from curl\",\"icon\":\"👋\"}'"
}
