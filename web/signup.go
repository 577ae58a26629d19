package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/clientip"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/internal/ratelimit"
)

// signupOpen: the first visitor of a fresh install creates the first account; after
// that only when the server runs with open sign-up.
func (s *Server) signupOpen(ctx context.Context) (bool, error) {
	if s.openSignup {
		return true, nil
	}
	n, err := s.store.CountUsers(ctx)
	return n == 0, err
}

type signupForm struct {
	Account, Email string
	First          bool
}

func (s *Server) signupPage(w http.ResponseWriter, r *http.Request) error {
	open, err := s.signupOpen(r.Context())
	if err != nil {
		return err
	}
	if !open {
		return tidings.Errorf(tidings.EForbidden, "Sign-up is closed on this server: ask an owner of your team for an invitation link.")
	}
	n, _ := s.store.CountUsers(r.Context())
	return s.render(w, r, "signup", &view{Title: "Create your account", Data: signupForm{First: n == 0}})
}

func (s *Server) signup(w http.ResponseWriter, r *http.Request) error {
	open, err := s.signupOpen(r.Context())
	if err != nil {
		return err
	}
	if !open {
		return tidings.Errorf(tidings.EForbidden, "Sign-up is closed on this server: ask an owner of your team for an invitation link.")
	}
	f := signupForm{Account: strings.TrimSpace(r.PostFormValue("account")), Email: strings.TrimSpace(r.PostFormValue("email"))}
	if n, err := s.store.CountUsers(r.Context()); err == nil {
		f.First = n == 0 // the explanation of a fresh install stays after an error
	}
	failWith := func(status int, msg string) error {
		return s.render(w, r, "signup", &view{Title: "Create your account", Status: status, Error: msg, Focus: focusFor(msg), Data: f})
	}
	fail := func(msg string) error { return failWith(http.StatusBadRequest, msg) }
	// Every attempt counts, before any hashing: an address cannot make the server
	// hash passwords (64 MiB each) faster than the limit.
	if _, ok := s.signups.Take(ratelimit.AddrKey(clientip.Of(r, s.trusted)), s.signupRate, signupBurst, s.now()); !ok {
		return failWith(http.StatusTooManyRequests, "Too many sign-ups from your network. Try again in an hour.")
	}
	if err := tidings.ValidateName("account", f.Account); err != nil {
		return fail("Team name: " + tidings.NameRuleMessage + ".")
	}
	if !validEmail(f.Email) {
		return fail("Enter a valid email address.")
	}
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("password2") {
		return fail("The two passwords differ.")
	}
	hash, err := s.passwords.Hash(r.Context(), pw)
	if errors.Is(err, password.ErrBusy) {
		return failWith(http.StatusTooManyRequests, busyMessage)
	}
	if err != nil {
		return fail("Password: " + err.Error() + ".")
	}
	if _, err := s.store.FindUserByEmail(r.Context(), f.Email); err == nil {
		return fail("An account with this email exists already: sign in instead.")
	}
	a, err := s.store.CreateAccount(r.Context(), f.Account)
	if tidings.ErrorCode(err) == tidings.EConflict {
		return fail("This team name is taken: choose another. (If you made it with the CLI, add yourself with `tidings user create EMAIL --account " + f.Account + "` and sign in.)")
	}
	if err != nil {
		return err
	}
	u := &tidings.User{AccountID: a.ID, Email: f.Email, PasswordHash: hash, Role: tidings.UserOwner}
	if err := s.store.CreateUser(r.Context(), u); err != nil {
		return err
	}
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	return redirect(w, r, "/") // home: the getting-started checklist
}

func validEmail(e string) bool {
	at := strings.IndexByte(e, '@')
	return at > 0 && at < len(e)-1 && len(e) <= maxEmailLen && !strings.ContainsAny(e, " \t\r\n<>\"") &&
		!strings.ContainsFunc(e, unicode.IsControl)
}

// signupBurst is how many sign-ups an address may make at once; the rate refills it.
const signupBurst = 5
