package web

import (
	"net/http"
	"strconv"

	"github.com/tidings-dev/tidings"
)

// memberData is a member's page: who they are, and for owners what to do about them
// (a password reset link; removal in a danger zone).
type memberData struct {
	Member   *tidings.User
	Self     bool   // the member is the person looking: nothing to do here but Settings → Password
	Reset    string // a password reset link just made, shown to copy once
	ResetFor string
}

func (s *Server) memberPage(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	u, err := s.store.FindUser(r.Context(), sess.account.ID, id) // another account's user: not found
	if err != nil {
		return err
	}
	fl := s.takeFlash(w, r)
	if fl == nil {
		fl = &flash{} // taken here: the layout does not take it again
	}
	d := memberData{Member: u, Self: u.ID == sess.user.ID}
	if fl.Reset != "" && fl.ResetFor == u.Email {
		d.Reset, d.ResetFor = fl.Reset, fl.ResetFor
	}
	return s.render(w, r, "member", &view{Title: u.Email + " · Members", Tab: "members", Section: "settings", Flash: fl, Data: d})
}
