package web

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/clientip"
	"github.com/tidings-dev/tidings/internal/password"
)

const (
	cookieName      = "tidings_session"
	sessionLifetime = 30 * 24 * time.Hour
	inviteLifetime  = 7 * 24 * time.Hour
)

type sessionKey struct{}

// session is the signed-in user of a request.
type session struct {
	hash    []byte
	user    *tidings.User
	account *tidings.Account
}

func sessionFrom(r *http.Request) *session {
	s, _ := r.Context().Value(sessionKey{}).(*session)
	return s
}

// loadSession finds the request's session, if its cookie names a live one.
func (s *Server) loadSession(r *http.Request) (*session, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	hash := tidings.HashSecret(c.Value)
	_, u, a, err := s.store.FindSession(r.Context(), hash, s.now())
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &session{hash: hash, user: u, account: a}, nil
}

// requireUser lets signed-in users through (owners only, when ownerOnly) and sends
// everybody else to the sign-in page.
func (s *Server) requireUser(next handlerFunc, ownerOnly bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		sess, err := s.loadSession(r)
		if err != nil {
			return err
		}
		if sess == nil {
			if r.Method == http.MethodGet {
				return redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
			}
			return redirect(w, r, "/login")
		}
		r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess))
		if ownerOnly && sess.user.Role != tidings.UserOwner {
			return errForbidden
		}
		return next(w, r)
	}
}

// isHTTPS tells whether the browser reached us over HTTPS: directly, or through a
// trusted proxy that says so.
func (s *Server) isHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range s.trusted {
		if p.Contains(ap.Addr().Unmap()) {
			return strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
		}
	}
	return false
}

// startSession signs u in: a new session row and its cookie.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u *tidings.User) error {
	secret, hash := tidings.NewSecret()
	now := s.now()
	if err := s.store.CreateSession(r.Context(), &tidings.Session{Hash: hash, UserID: u.ID, CreatedAt: now,
		ExpiresAt: now.Add(sessionLifetime)}); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: "/", MaxAge: int(sessionLifetime.Seconds()),
		HttpOnly: true, Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	return nil
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) error {
	n, err := s.store.CountUsers(r.Context())
	if err != nil {
		return err
	}
	if n == 0 {
		return redirect(w, r, "/signup")
	}
	sess, err := s.loadSession(r)
	if err != nil {
		return err
	}
	if sess == nil {
		return redirect(w, r, "/login")
	}
	ps, err := s.store.ListProjects(r.Context(), sess.account.ID)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return redirect(w, r, "/settings/projects")
	}
	return redirect(w, r, "/p/"+ps[0].Name)
}

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
	fail := func(msg string) error {
		return s.render(w, r, "signup", &view{Title: "Create your account", Status: http.StatusBadRequest, Error: msg, Data: f})
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
	hash, err := password.Hash(pw)
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
	return redirect(w, r, "/settings/projects")
}

func validEmail(e string) bool {
	at := strings.IndexByte(e, '@')
	return at > 0 && at < len(e)-1 && len(e) <= 254 && !strings.ContainsAny(e, " \t\r\n<>\"")
}

type loginForm struct {
	Email, Next string
	SignupOpen  bool
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) error {
	open, _ := s.signupOpen(r.Context())
	return s.render(w, r, "login", &view{Title: "Sign in", Data: loginForm{Next: safeNext(r.URL.Query().Get("next")), SignupOpen: open}})
}

// dummyHash is verified against when the email is unknown, so that both answers take
// as long and the timing does not tell which emails have accounts.
var dummyHash, _ = password.Hash("not a real password")

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	f := loginForm{Email: strings.TrimSpace(r.PostFormValue("email")), Next: safeNext(r.PostFormValue("next"))}
	fail := func(status int, msg string) error {
		return s.render(w, r, "login", &view{Title: "Sign in", Status: status, Error: msg, Data: f})
	}
	if !s.logins.allow(clientip.Of(r, s.trusted), strings.ToLower(f.Email), s.now()) {
		return fail(http.StatusTooManyRequests, "Too many sign-in attempts. Wait a minute and try again.")
	}
	u, err := s.store.FindUserByEmail(r.Context(), f.Email)
	hash := dummyHash
	if err == nil {
		hash = u.PasswordHash
	}
	ok, _ := password.Verify(hash, r.PostFormValue("password"))
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

// safeNext keeps only local paths, so that a crafted link cannot send people elsewhere.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") && !strings.HasPrefix(next, "/\\") {
		return next
	}
	return ""
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteSession(r.Context(), sessionFrom(r).hash); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	return redirect(w, r, "/login")
}

func (s *Server) passwordPage(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, "password", &view{Title: "Change password", Section: "settings"})
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	fail := func(msg string) error {
		return s.render(w, r, "password", &view{Title: "Change password", Section: "settings", Status: http.StatusBadRequest, Error: msg})
	}
	if ok, _ := password.Verify(sess.user.PasswordHash, r.PostFormValue("current")); !ok {
		return fail("The current password is wrong.")
	}
	if r.PostFormValue("new") != r.PostFormValue("new2") {
		return fail("The two new passwords differ.")
	}
	hash, err := password.Hash(r.PostFormValue("new"))
	if err != nil {
		return fail("New password: " + err.Error() + ".")
	}
	if err := s.store.SetPassword(r.Context(), sess.user.ID, hash, sess.hash); err != nil {
		return err
	}
	return s.render(w, r, "password", &view{Title: "Change password", Section: "settings",
		Data: "Your password is changed. Your other sessions are signed out."})
}

// loginLimiter slows down password guessing: per client address and per email.
type loginLimiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

func newLoginLimiter() *loginLimiter { return &loginLimiter{buckets: map[string]*rate.Limiter{}} }

func (l *loginLimiter) allow(ip netip.Addr, email string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > 10*time.Minute {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	get := func(key string, every time.Duration, burst int) *rate.Limiter {
		b := l.buckets[key]
		if b == nil {
			b = rate.NewLimiter(rate.Every(every), burst)
			l.buckets[key] = b
		}
		return b
	}
	byIP := get("ip:"+ip.String(), 6*time.Second, 10) // 10 at once, then 10 a minute
	byEmail := get("email:"+email, 30*time.Second, 5) // 5 at once, then 2 a minute
	if !byIP.AllowN(now, 1) {
		return false
	}
	return byEmail.AllowN(now, 1)
}
