package web

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
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
	OnlyUser    bool // a fresh install with one user: the CLI reset is theirs to run
	CanMail     bool // "Forgot password?" mails a reset link
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) error {
	open, _ := s.signupOpen(r.Context())
	n, _ := s.store.CountUsers(r.Context())
	return s.render(w, r, "login", &view{Title: "Sign in", Data: loginForm{Next: safeNext(r.URL.Query().Get("next")), SignupOpen: open, OnlyUser: n == 1, CanMail: s.mailsLinks()}})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	f := loginForm{Email: strings.TrimSpace(r.PostFormValue("email")), Next: safeNext(r.PostFormValue("next")), CanMail: s.mailsLinks()}
	fail := func(status int, msg string) error {
		return s.render(w, r, "login", &view{Title: "Sign in", Status: status, Error: msg, Focus: focusFor(msg), Data: f})
	}
	if len(f.Email) > maxEmailLen {
		f.Email = ""
		return fail(http.StatusBadRequest, "Enter a valid email address.")
	}
	ip, email := clientip.Of(r, s.trusted), strings.ToLower(f.Email)
	switch s.logins.allow(ip, email, s.now()) {
	case loginRefused:
		return fail(http.StatusTooManyRequests, "Too many sign-in attempts. Wait a minute and try again.")
	case loginSlowed:
		// Many failures for this email from many networks: every attempt waits a
		// little, the owner's included, but nobody is locked out.
		select {
		case <-time.After(loginDelay):
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
	u, err := s.store.FindUserByEmail(r.Context(), f.Email)
	hash := s.dummyHash()
	if err == nil {
		hash = u.PasswordHash
	}
	ok, verr := s.passwords.Verify(r.Context(), hash, r.PostFormValue("password"))
	if errors.Is(verr, password.ErrBusy) {
		return fail(http.StatusTooManyRequests, busyMessage)
	}
	if err != nil || !ok {
		s.logins.failed(ip, email, s.now())
		return fail(http.StatusUnauthorized, "Wrong email or password.")
	}
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	if f.Next != "" {
		return redirect(w, r, f.Next)
	}
	return redirect(w, r, s.signInLanding(r.Context(), u))
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
	s.broker.Publish(tidings.Notice{AccountID: sess.account.ID, SessionEnd: &tidings.SessionEnd{Hash: sess.hash}})
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	return redirect(w, r, "/login")
}

// Bounds of the sign-in and sign-up limiters' memory (buckets kept at most).
const (
	maxAddrBuckets  = 50000
	maxEmailBuckets = 50000
)

// loginLimiter slows down password guessing. Every attempt counts against its client
// address; failed ones count against the email from that network, which is where the
// hard limit is, so that a guesser elsewhere cannot lock the owner out; and against the
// email from anywhere, which past its limit slows every attempt but refuses none.
// An address over its limit never creates a bucket of an email, so invented emails
// cannot grow memory faster than the address limit allows; every map is bounded anyway.
type loginLimiter struct {
	byAddr     *ratelimit.Keyed[netip.Prefix]
	byEmailNet *ratelimit.Keyed[emailNet]
	byEmail    *ratelimit.Keyed[string]
}

// emailNet is an email as tried from one client network (an IPv4 address, an IPv6 /64).
type emailNet struct {
	email string
	net   netip.Prefix
}

// What the limiter says of an attempt.
const (
	loginAllowed = iota
	loginSlowed  // check it after loginDelay
	loginRefused // 429
)

// loginDelay is how long an attempt waits while its email is over the global limit.
const loginDelay = time.Second

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{byAddr: ratelimit.NewKeyed[netip.Prefix](maxAddrBuckets),
		byEmailNet: ratelimit.NewKeyed[emailNet](maxEmailBuckets), byEmail: ratelimit.NewKeyed[string](maxEmailBuckets)}
}

func (l *loginLimiter) allow(ip netip.Addr, email string, now time.Time) int {
	addr := ratelimit.AddrKey(ip)
	if _, ok := l.byAddr.Take(addr, rate.Every(6*time.Second), 10, now); !ok { // 10 at once, then 10 a minute
		return loginRefused
	}
	if !l.byEmailNet.Peek(emailNet{email, addr}, now) {
		return loginRefused
	}
	if !l.byEmail.Peek(email, now) {
		return loginSlowed
	}
	return loginAllowed
}

// failed counts a wrong password: 5 at once per email and network, then 2 a minute;
// 20 at once per email from anywhere, then 4 a minute, before attempts slow down.
func (l *loginLimiter) failed(ip netip.Addr, email string, now time.Time) {
	l.byEmailNet.Take(emailNet{email, ratelimit.AddrKey(ip)}, rate.Every(30*time.Second), 5, now)
	l.byEmail.Take(email, rate.Every(15*time.Second), 20, now)
}
