package web

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/clientip"
	"github.com/tidings-dev/tidings/internal/ratelimit"
	"github.com/tidings-dev/tidings/mail"
)

// "Forgot password?" on the sign-in page, when the server sends mail: a member types
// their email and gets a reset link. The answer is the same whether or not the address
// is a member, and takes as long: the page only queues the address; the lookup, the
// link and the mail happen on the mail sender's goroutine (sendMails).

// mailQueue bounds the addresses waiting for their reset mail: past it, a request is
// dropped (and logged), never waited for.
const mailQueue = 100

// mailTimeout bounds the sending of one account mail.
const mailTimeout = 15 * time.Second

type forgotData struct {
	Email string
	Sent  bool // the answer
	Off   bool // this server sends no mail: ask an owner
}

// mailsLinks reports whether the server can mail links: SMTP and a public URL to
// build them on (never the request's Host, which the requester chooses).
func (s *Server) mailsLinks() bool { return s.mailer != nil && s.publicURL != "" }

func (s *Server) forgotPage(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, "forgot", &view{Title: "Forgot your password?", Data: forgotData{Off: !s.mailsLinks()}})
}

func (s *Server) forgot(w http.ResponseWriter, r *http.Request) error {
	if !s.mailsLinks() {
		return s.render(w, r, "forgot", &view{Title: "Forgot your password?", Status: http.StatusNotFound, Data: forgotData{Off: true}})
	}
	d := forgotData{Email: strings.TrimSpace(r.PostFormValue("email"))}
	fail := func(status int, msg string) error {
		return s.render(w, r, "forgot", &view{Title: "Forgot your password?", Status: status, Error: msg, Focus: "email", Data: d})
	}
	if len(d.Email) > maxEmailLen || !validEmail(d.Email) {
		d.Email = ""
		return fail(http.StatusBadRequest, "Enter a valid email address.")
	}
	email := strings.ToLower(d.Email)
	if !s.forgotLimit.allow(clientip.Of(r, s.trusted), email, s.now()) {
		return fail(http.StatusTooManyRequests, "Too many reset requests. Wait a few minutes and try again.")
	}
	select {
	case s.mails <- email:
	default:
		s.log.Warn("forgot password: the mail queue is full; request dropped", "queue", mailQueue)
	}
	d.Sent = true
	return s.render(w, r, "forgot", &view{Title: "Forgot your password?", Data: d})
}

// sendMails sends the reset links asked for on the sign-in page until ctx ends.
func (s *Server) sendMails(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case email := <-s.mails:
			s.mailReset(ctx, email)
		}
	}
}

// mailReset makes a reset link for the member with that email, if there is one, and
// mails it to them.
func (s *Server) mailReset(ctx context.Context, email string) {
	u, err := s.store.FindUserByEmail(ctx, email)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		s.log.Info("forgot password: no member with that email; nothing sent")
		return
	}
	if err != nil {
		s.log.Error("forgot password: finding the member", "err", err)
		return
	}
	secret, hash := tidings.NewSecret()
	now := s.now()
	inv := &tidings.Invite{Hash: hash, AccountID: u.AccountID, ResetUser: u.ID, CreatedBy: u.ID, CreatedAt: now, ExpiresAt: now.Add(resetLifetime)}
	if err := s.store.CreateInvite(ctx, inv); err != nil {
		s.log.Error("forgot password: making the link", "user", u.ID, "err", err)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, mailTimeout)
	defer cancel()
	if err := s.mailer.Send(sctx, mail.ResetMessage(u.Email, s.publicURL+"/reset/"+secret, inv.ExpiresAt)); err != nil {
		s.log.Warn("forgot password: the mail was not sent", "user", u.ID, "err", err)
		if err := s.store.RevokeInvite(context.WithoutCancel(ctx), u.AccountID, tidings.InviteID(hash)); err != nil {
			s.log.Error("forgot password: revoking the unsent link", "user", u.ID, "err", err)
		}
		return
	}
	s.log.Info("forgot password: reset link mailed", "user", u.ID)
}

// forgotLimiter bounds reset requests: per client address (10 at once, then 1 a
// minute), and per email from anywhere (3 at once, then 1 every 10 minutes), so that
// nobody's inbox is flooded. An address over its limit never creates a bucket of an
// email; both maps are bounded anyway.
type forgotLimiter struct {
	byAddr  *ratelimit.Keyed[netip.Prefix]
	byEmail *ratelimit.Keyed[string]
}

func newForgotLimiter() *forgotLimiter {
	return &forgotLimiter{byAddr: ratelimit.NewKeyed[netip.Prefix](maxAddrBuckets), byEmail: ratelimit.NewKeyed[string](maxEmailBuckets)}
}

func (l *forgotLimiter) allow(ip netip.Addr, email string, now time.Time) bool {
	if _, ok := l.byAddr.Take(ratelimit.AddrKey(ip), rate.Every(time.Minute), 10, now); !ok {
		return false
	}
	_, ok := l.byEmail.Take(email, rate.Every(10*time.Minute), 3, now)
	return ok
}
