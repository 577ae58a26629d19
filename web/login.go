package web

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings/internal/clientip"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/internal/ratelimit"
)

// busyMessage answers a password check that waited too long for its turn.
const busyMessage = "The server is busy checking other passwords. Try again in a moment."

// maxEmailLen is the longest email address (RFC 5321's path limit).
const maxEmailLen = 254

type loginForm struct {
	Email, Next string
	SignupOpen  bool
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) error {
	open, _ := s.signupOpen(r.Context())
	return s.render(w, r, "login", &view{Title: "Sign in", Data: loginForm{Next: safeNext(r.URL.Query().Get("next")), SignupOpen: open}})
}

// dummyHash is verified against when the email is unknown, so that both answers take
// as long and the timing does not tell which emails have accounts. Made on first use,
// not at start-up: every CLI command links this package.
var dummyHash = sync.OnceValue(func() string {
	h, _ := password.Hash("not a real password")
	return h
})

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	f := loginForm{Email: strings.TrimSpace(r.PostFormValue("email")), Next: safeNext(r.PostFormValue("next"))}
	fail := func(status int, msg string) error {
		return s.render(w, r, "login", &view{Title: "Sign in", Status: status, Error: msg, Focus: focusFor(msg), Data: f})
	}
	if len(f.Email) > maxEmailLen {
		f.Email = ""
		return fail(http.StatusBadRequest, "Enter a valid email address.")
	}
	if !s.logins.allow(clientip.Of(r, s.trusted), strings.ToLower(f.Email), s.now()) {
		return fail(http.StatusTooManyRequests, "Too many sign-in attempts. Wait a minute and try again.")
	}
	u, err := s.store.FindUserByEmail(r.Context(), f.Email)
	hash := dummyHash()
	if err == nil {
		hash = u.PasswordHash
	}
	ok, verr := s.passwords.Verify(r.Context(), hash, r.PostFormValue("password"))
	if errors.Is(verr, password.ErrBusy) {
		return fail(http.StatusTooManyRequests, busyMessage)
	}
	if err != nil || !ok {
		return fail(http.StatusUnauthorized, "Wrong email or password.")
	}
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	if f.Next != "" {
		return redirect(w, r, f.Next)
	}
	return redirect(w, r, "/")
}

// safeNext keeps only local paths, so that a crafted link cannot send people elsewhere:
// one "/" followed by neither "/" nor "\\" (browsers read both as "//", another host),
// and no control characters (browsers drop tabs and line breaks, so "/\t/evil" would
// become "//evil").
func safeNext(next string) string {
	if len(next) > 2048 || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.HasPrefix(next, "/\\") || strings.ContainsFunc(next, unicode.IsControl) {
		return ""
	}
	return next
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	if err := s.store.DeleteSession(r.Context(), sess.hash); err != nil {
		return err
	}
	s.hub.endSessions(sess.account.ID, func(ls *liveStream) bool { return ls.session == string(sess.hash) })
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	return redirect(w, r, "/login")
}

// Bounds of the sign-in and sign-up limiters' memory (buckets kept at most).
const (
	maxAddrBuckets  = 50000
	maxEmailBuckets = 50000
)

// loginLimiter slows down password guessing: per client address first, then per email.
// An address over its limit never creates an email bucket, so invented emails cannot
// grow memory faster than the address limit allows; both maps are bounded anyway.
type loginLimiter struct {
	byAddr  *ratelimit.Keyed[netip.Prefix]
	byEmail *ratelimit.Keyed[string]
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{byAddr: ratelimit.NewKeyed[netip.Prefix](maxAddrBuckets),
		byEmail: ratelimit.NewKeyed[string](maxEmailBuckets)}
}

func (l *loginLimiter) allow(ip netip.Addr, email string, now time.Time) bool {
	if _, ok := l.byAddr.Take(ratelimit.AddrKey(ip), rate.Every(6*time.Second), 10, now); !ok { // 10 at once, then 10 a minute
		return false
	}
	_, ok := l.byEmail.Take(email, rate.Every(30*time.Second), 5, now) // 5 at once, then 2 a minute
	return ok
}
