package web

import (
	"net/http"

	"github.com/tidings-dev/tidings"
)

// tokenPage is one token's page: what it may do, when it was last used, and its
// revocation in a danger zone. Another account's token is not found.
func (s *Server) tokenPage(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.store.ListTokens(r.Context(), sessionFrom(r).account.ID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.ID == r.PathValue("id") {
			return s.render(w, r, "token", &view{Title: tokenLabel(t) + " · API tokens", Tab: "api", Section: "settings", Data: t})
		}
	}
	return tidings.Errorf(tidings.ENotFound, "There is no token %s in your team.", r.PathValue("id"))
}

// tokenLabel names a token in titles: its name, or its ID.
func tokenLabel(t *tidings.Token) string {
	if t.Name != "" {
		return t.Name
	}
	return t.ID
}
