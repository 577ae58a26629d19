package web

import (
	"errors"
	"net/http"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/password"
)

func (s *Server) passwordPage(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, "password", &view{Title: "Change password", Section: "settings"})
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	fail := func(msg string) error {
		return s.render(w, r, "password", &view{Title: "Change password", Section: "settings", Status: http.StatusBadRequest, Error: msg})
	}
	ok, err := s.passwords.Verify(r.Context(), sess.user.PasswordHash, r.PostFormValue("current"))
	if errors.Is(err, password.ErrBusy) {
		return s.render(w, r, "password", &view{Title: "Change password", Section: "settings", Status: http.StatusTooManyRequests, Error: busyMessage})
	}
	if !ok {
		return fail("The current password is wrong.")
	}
	if r.PostFormValue("new") != r.PostFormValue("new2") {
		return fail("The two new passwords differ.")
	}
	hash, err := s.passwords.Hash(r.Context(), r.PostFormValue("new"))
	if err != nil {
		return fail("New password: " + err.Error() + ".")
	}
	if err := s.store.SetPassword(r.Context(), sess.user.ID, hash, sess.hash); err != nil {
		return err
	}
	s.broker.Publish(tidings.Notice{AccountID: sess.account.ID,
		SessionEnd: &tidings.SessionEnd{UserID: sess.user.ID, Keep: sess.hash}})
	return s.render(w, r, "password", &view{Title: "Change password", Section: "settings",
		Data: "Your password is changed. Your other sessions are signed out."})
}
