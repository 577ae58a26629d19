package web

import (
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings/internal/clientip"
	"github.com/tidings-dev/tidings/internal/password"
)

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
		return s.render(w, r, "login", &view{Title: "Sign in", Status: status, Error: msg, Data: f})
	}
	if !s.logins.allow(clientip.Of(r, s.trusted), strings.ToLower(f.Email), s.now()) {
		return fail(http.StatusTooManyRequests, "Too many sign-in attempts. Wait a minute and try again.")
	}
	u, err := s.store.FindUserByEmail(r.Context(), f.Email)
	hash := dummyHash()
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
	sess := sessionFrom(r)
	if err := s.store.DeleteSession(r.Context(), sess.hash); err != nil {
		return err
	}
	s.hub.endSessions(sess.account.ID, func(ls *liveStream) bool { return ls.session == string(sess.hash) })
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	return redirect(w, r, "/login")
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
