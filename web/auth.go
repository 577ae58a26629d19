package web

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
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
			if r.Header.Get("Accept") == "text/event-stream" {
				// A live view whose session is gone: 204 tells EventSource to stop
				// (a sign-in page would be an error in the console, and is no stream).
				w.WriteHeader(http.StatusNoContent)
				return nil
			}
			if r.Method == http.MethodGet {
				return redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
			}
			return redirect(w, r, "/login")
		}
		r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess))
		if ownerOnly && sess.user.Role != tidings.UserOwner {
			return tidings.Errorf(tidings.EForbidden, "%s", ownerOnlyMessage(r.URL.Path))
		}
		return next(w, r)
	}
}

// isHTTPS tells whether the browser reached us over HTTPS: directly, or through a
// trusted proxy that says so.
func (s *Server) isHTTPS(r *http.Request) bool {
	if r.TLS != nil || s.httpsOnly {
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

// ownerOnlyMessage tells a member what an owner page is for and who may use it.
func ownerOnlyMessage(path string) string {
	what := "do this"
	switch {
	case strings.HasPrefix(path, "/settings/api"):
		what = "manage API tokens"
	case strings.HasPrefix(path, "/settings/webhooks"):
		what = "manage webhooks"
	case strings.HasPrefix(path, "/settings/hooks"):
		what = "create or delete inbound hooks"
	case strings.HasPrefix(path, "/settings/members"):
		what = "invite or remove members"
	case strings.HasPrefix(path, "/settings/projects"):
		what = "create, change or delete projects and channels"
	case strings.Contains(path, "/delete"):
		what = "delete events and insights"
	}
	return "Only owners can " + what + ". Ask an owner of your team (Settings → Members lists them)."
}

// SessionActor is who a request acts as through its dashboard session: the account
// and the member's email, ok false without a live session or when the request comes
// from another site (the same cross-origin protection as every form). The API takes
// it for the routes that a signed-in member may also call.
func (s *Server) SessionActor(r *http.Request) (accountID int64, by string, ok bool) {
	if err := s.cop.Check(r); err != nil {
		return 0, "", false
	}
	sess, err := s.loadSession(r)
	if err != nil || sess == nil {
		return 0, "", false
	}
	return sess.account.ID, sess.user.Email, true
}
