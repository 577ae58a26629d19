package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/mail"
)

type membersData struct {
	Members    []*tidings.User
	Invites    []*tidings.Invite // pending: owners may revoke them
	Invite     string            // the link just made, shown to copy
	InviteRole string            // and the role it grants
	MailTo     string            // the address it was to be mailed to
	MailErr    string            // and why it was not
	CanMail    bool              // invitations with an email are mailed
	Open       bool              // the invitation form is shown open: the owner is alone
}

func (s *Server) membersPage(w http.ResponseWriter, r *http.Request) error {
	fl := s.takeFlash(w, r)
	if fl == nil {
		fl = &flash{}
	}
	sess := sessionFrom(r)
	us, err := s.store.ListUsers(r.Context(), sess.account.ID)
	if err != nil {
		return err
	}
	d := membersData{Members: us, Invite: fl.Invite, InviteRole: fl.Role,
		MailTo: fl.MailTo, MailErr: fl.MailErr, CanMail: s.mailsLinks(), Open: len(us) == 1}
	if sess.user.Role == tidings.UserOwner {
		if d.Invites, err = s.store.ListInvites(r.Context(), sess.account.ID, s.now()); err != nil {
			return err
		}
	}
	return s.render(w, r, "members", &view{Title: "Members", Tab: "members", Section: "settings", Flash: fl, Data: d})
}

func (s *Server) invite(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	role := r.PostFormValue("role")
	if role == "" {
		role = tidings.UserMember
	}
	if role != tidings.UserMember && role != tidings.UserOwner {
		return tidings.Errorf(tidings.EValidation, "An invitation is for a member or an owner.")
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	if email != "" && !validEmail(email) {
		return tidings.Errorf(tidings.EValidation, "Email: enter a valid address, or leave it empty to copy the link yourself.")
	}
	secret, hash := tidings.NewSecret()
	now := s.now()
	inv := &tidings.Invite{Hash: hash, AccountID: sess.account.ID, Role: role, Email: email,
		CreatedBy: sess.user.ID, CreatedAt: now, ExpiresAt: now.Add(inviteLifetime)}
	if err := s.store.CreateInvite(r.Context(), inv); err != nil {
		return err
	}
	if email != "" && s.mailsLinks() {
		// Mailed links start with the public URL, never the request's Host.
		link := s.publicURL + "/invite/" + secret
		ctx, cancel := context.WithTimeout(r.Context(), mailTimeout)
		err := s.mailer.Send(ctx, mail.InviteMessage(email, sess.account.Name, sess.user.Email, role, link, inv.ExpiresAt))
		cancel()
		if err == nil {
			return s.notice(w, r, "/settings/members", "Invitation mailed to "+email+".")
		}
		s.log.Warn("invitation: the mail was not sent", "to", email, "err", err)
		// The link still works: shown to copy, with the mail server's words.
		if err := s.setFlash(w, r, flash{Invite: link, Role: role, MailTo: email, MailErr: mailErrorText(err)}); err != nil {
			return err
		}
		return redirect(w, r, "/settings/members#invite-link")
	}
	scheme := "http"
	if s.isHTTPS(r) {
		scheme = "https"
	}
	// Shown once by the page the browser is sent to: a reload does not make another.
	if err := s.setFlash(w, r, flash{Invite: scheme + "://" + r.Host + "/invite/" + secret, Role: role}); err != nil {
		return err
	}
	return redirect(w, r, "/settings/members#invite-link")
}

// mailErrorText says why a mail was not sent: the server's reply when it refused it.
func mailErrorText(err error) string {
	var me *tidings.MailError
	if errors.As(err, &me) {
		return me.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the mail server did not answer in time"
	}
	return "the mail server could not be reached"
}

func (s *Server) revokeInvite(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.RevokeInvite(r.Context(), sessionFrom(r).account.ID, r.PathValue("id")); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/members", "Link revoked: it no longer works.")
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	if id == sess.user.ID {
		return tidings.Errorf(tidings.EForbidden, "You cannot remove yourself.")
	}
	u, err := s.store.FindUser(r.Context(), sess.account.ID, id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteUser(r.Context(), sess.account.ID, id); err != nil {
		return err
	}
	s.broker.Publish(tidings.Notice{AccountID: sess.account.ID, SessionEnd: &tidings.SessionEnd{UserID: id}})
	return s.notice(w, r, "/settings/members", u.Email+" removed from the team and signed out everywhere.")
}

type inviteData struct {
	Account string
	Email   string
}

func (s *Server) invitePage(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.store.FindInvite(r.Context(), tidings.HashSecret(r.PathValue("secret")), s.now())
	if err != nil {
		return err
	}
	return s.render(w, r, "invite", &view{Title: "Join " + inv.AccountName, Data: inviteData{Account: inv.AccountName}})
}

func (s *Server) acceptInvite(w http.ResponseWriter, r *http.Request) error {
	hash := tidings.HashSecret(r.PathValue("secret"))
	inv, err := s.store.FindInvite(r.Context(), hash, s.now())
	if err != nil {
		return err
	}
	name := inv.AccountName
	d := inviteData{Account: name, Email: strings.TrimSpace(r.PostFormValue("email"))}
	fail := func(msg string) error {
		return s.render(w, r, "invite", &view{Title: "Join " + name, Status: http.StatusBadRequest, Error: msg, Focus: focusFor(msg), Data: d})
	}
	if !validEmail(d.Email) {
		return fail("Enter a valid email address.")
	}
	if r.PostFormValue("password") != r.PostFormValue("password2") {
		return fail("The two passwords differ.")
	}
	ph, err := s.passwords.Hash(r.Context(), r.PostFormValue("password"))
	if errors.Is(err, password.ErrBusy) {
		return s.render(w, r, "invite", &view{Title: "Join " + name, Status: http.StatusTooManyRequests, Error: busyMessage, Data: d})
	}
	if err != nil {
		return fail("Password: " + err.Error() + ".")
	}
	u := &tidings.User{Email: d.Email, PasswordHash: ph}
	if err := s.store.AcceptInvite(r.Context(), hash, u, s.now()); err != nil {
		if tidings.ErrorCode(err) == tidings.EConflict {
			return fail("An account with this email exists already.")
		}
		return err
	}
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	return redirect(w, r, "/")
}

// resetLifetime is how long a password reset link works.
const resetLifetime = 24 * time.Hour

// createResetLink makes a one-time link with which a member of the team chooses a new
// password: for a person who lost theirs. The owner sends it to them.
func (s *Server) createResetLink(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	u, err := s.store.FindUser(r.Context(), sess.account.ID, id)
	if err != nil {
		return err
	}
	if u.ID == sess.user.ID {
		return tidings.Errorf(tidings.EValidation, "Change your own password in Settings → Password.")
	}
	secret, hash := tidings.NewSecret()
	now := s.now()
	if err := s.store.CreateInvite(r.Context(), &tidings.Invite{Hash: hash, AccountID: sess.account.ID, ResetUser: u.ID,
		CreatedBy: sess.user.ID, CreatedAt: now, ExpiresAt: now.Add(resetLifetime)}); err != nil {
		return err
	}
	scheme := "http"
	if s.isHTTPS(r) {
		scheme = "https"
	}
	if err := s.setFlash(w, r, flash{Reset: scheme + "://" + r.Host + "/reset/" + secret, ResetFor: u.Email}); err != nil {
		return err
	}
	// Shown on the member's page, once.
	return redirect(w, r, "/settings/members/"+strconv.FormatInt(u.ID, 10)+"#reset-link")
}

var errResetLink = tidings.Errorf(tidings.ENotFound, "This password reset link is unknown, used or expired: ask an owner of your team for a new one.")

type resetData struct {
	Email string
}

func (s *Server) resetPage(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.store.FindInvite(r.Context(), tidings.HashSecret(r.PathValue("secret")), s.now())
	if err == nil && inv.ResetUser == 0 || tidings.ErrorCode(err) == tidings.ENotFound {
		err = errResetLink
	}
	if err != nil {
		return err
	}
	return s.render(w, r, "reset", &view{Title: "Choose a new password", Data: resetData{Email: inv.ResetEmail}})
}

func (s *Server) useReset(w http.ResponseWriter, r *http.Request) error {
	hash := tidings.HashSecret(r.PathValue("secret"))
	inv, err := s.store.FindInvite(r.Context(), hash, s.now())
	if err == nil && inv.ResetUser == 0 || tidings.ErrorCode(err) == tidings.ENotFound {
		err = errResetLink
	}
	if err != nil {
		return err
	}
	fail := func(status int, msg string) error {
		return s.render(w, r, "reset", &view{Title: "Choose a new password", Status: status, Error: msg, Focus: "password",
			Data: resetData{Email: inv.ResetEmail}})
	}
	if r.PostFormValue("password") != r.PostFormValue("password2") {
		return fail(http.StatusBadRequest, "The two passwords differ.")
	}
	ph, err := s.passwords.Hash(r.Context(), r.PostFormValue("password"))
	if errors.Is(err, password.ErrBusy) {
		return fail(http.StatusTooManyRequests, busyMessage)
	}
	if err != nil {
		return fail(http.StatusBadRequest, "Password: "+err.Error()+".")
	}
	u, err := s.store.UseReset(r.Context(), hash, ph, s.now())
	if err != nil {
		return err
	}
	s.broker.Publish(tidings.Notice{AccountID: u.AccountID, SessionEnd: &tidings.SessionEnd{UserID: u.ID}})
	if err := s.startSession(w, r, u); err != nil {
		return err
	}
	return redirect(w, r, "/")
}
