package web

import (
	"net/http"
	"net/url"
)

// lastProjectCookie remembers the project last looked at, for the settings forms that
// start on "the current project" (a token's limit, a webhook's project): a person who
// goes from my-saas's feed to Settings → API means my-saas. Only settings pages read it.
const lastProjectCookie = "tidings_project"

// rememberProject keeps the project of a page just shown (when it changed).
func (s *Server) rememberProject(w http.ResponseWriter, r *http.Request, project string) {
	if project == "" {
		return
	}
	if c, err := r.Cookie(lastProjectCookie); err == nil && c.Value == url.QueryEscape(project) {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: lastProjectCookie, Value: url.QueryEscape(project), Path: "/settings",
		MaxAge: 90 * 24 * 3600, HttpOnly: true, Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
}

// currentProject is the project a settings form starts on: ?project= of the link that
// led here, else the project last looked at; only one of the account's (choices), so
// that another account's name is never offered; "" when none is.
func (s *Server) currentProject(r *http.Request, choices []projectRow) string {
	names := []string{r.URL.Query().Get("project")}
	if c, err := r.Cookie(lastProjectCookie); err == nil {
		name, _ := url.QueryUnescape(c.Value)
		names = append(names, name)
	}
	for _, name := range names {
		for _, p := range choices {
			if name != "" && p.Name == name {
				return name
			}
		}
	}
	return ""
}
