// The invitation commands: tidings invite create, list, revoke.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/mail"
)

const (
	// inviteLifetime is how long an invitation works, as one made on the members page.
	inviteLifetime = 7 * 24 * time.Hour
	// inviteMailTimeout bounds the mailing of an invitation, as the members page's.
	inviteMailTimeout = 15 * time.Second
)

func inviteFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.StringVar(&c.email, "email", "", "the `address` to mail the invitation to (with --smtp-url and --public-url); pending invitations list it")
	fs.StringVar(&c.role, "role", tidings.UserMember, "what the invitation makes its user: member or owner")
	fs.StringVar(&c.cfg.PublicURL, "public-url", envString("PUBLIC_URL", ""),
		"the dashboard's address as people reach it, e.g. https://tidings.example.com: the link is built on it (TIDINGS_PUBLIC_URL)")
	mailFlags(fs, &c.cfg)
}

// validEmail reports whether s is a bare address, as the dashboard's forms take it.
func validEmail(s string) bool {
	a, err := netmail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// inviteCreate makes an invitation, mails it when it can, and prints its link. A mail
// that was not sent revokes the invitation: the command failed, nothing is left.
func inviteCreate(ctx context.Context, c *cli, _ []string) error {
	if c.role != tidings.UserMember && c.role != tidings.UserOwner {
		return tidings.Errorf(tidings.EValidation, "--role must be member or owner, not %q", c.role)
	}
	email := strings.TrimSpace(c.email)
	if email != "" && !validEmail(email) {
		return tidings.Errorf(tidings.EValidation, "--email must be an email address, like bob@example.com, not %q", c.email)
	}
	base := strings.TrimRight(c.cfg.PublicURL, "/")
	if base != "" {
		if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return tidings.Errorf(tidings.EValidation, "--public-url must be an http:// or https:// address, like https://tidings.example.com")
		}
	}
	if len(c.cfg.envErrs) > 0 { // a TIDINGS_SMTP_INSECURE that is not a boolean
		return errors.Join(c.cfg.envErrs...)
	}
	mailer, err := newMailer(&c.cfg)
	if err != nil {
		return err
	}
	mailIt := mailer != nil && email != ""
	if mailIt && base == "" {
		return tidings.Errorf(tidings.EValidation, "--public-url is needed to mail an invitation: its link must be a whole address (https://tidings.example.com/invite/…)")
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if email != "" {
			if err := notAUser(ctx, s, a, email); err != nil {
				return err
			}
		}
		owner, err := firstOwner(ctx, s, a)
		if err != nil {
			return err
		}
		secret, hash := tidings.NewSecret()
		now := time.Now()
		inv := &tidings.Invite{Hash: hash, AccountID: a.ID, Role: c.role, Email: email,
			CreatedBy: owner.ID, CreatedAt: now, ExpiresAt: now.Add(inviteLifetime)}
		if err := s.CreateInvite(ctx, inv); err != nil {
			return err
		}
		link := base + "/invite/" + secret
		if mailIt {
			mctx, cancel := context.WithTimeout(ctx, inviteMailTimeout)
			err := mailer.Send(mctx, mail.InviteMessage(email, a.Name, "", inv.Role, link, inv.ExpiresAt))
			cancel()
			if err != nil {
				if rerr := s.RevokeInvite(context.WithoutCancel(ctx), a.ID, tidings.InviteID(hash)); rerr != nil {
					return fmt.Errorf("%s, and revoking the invitation failed: %w", notMailed(err), rerr)
				}
				return fmt.Errorf("%s; the invitation is revoked", notMailed(err))
			}
		}
		fmt.Fprintln(c.stdout, link)
		switch {
		case mailIt:
			fmt.Fprintf(c.stderr, "mailed to %s\n", email)
		case email != "":
			fmt.Fprintf(c.stderr, "not mailed (no --smtp-url): send the link to %s yourself\n", email)
		}
		if base == "" {
			fmt.Fprintln(c.stderr, "note: without --public-url (TIDINGS_PUBLIC_URL) this is only the link's path: put the dashboard's address before it")
		}
		return nil
	})
}

// notMailed says why a mail was not sent: the server's reply, or what went wrong on the way.
func notMailed(err error) string {
	var me *tidings.MailError
	if errors.As(err, &me) {
		return me.Error()
	}
	return "could not mail it: " + oneLine(err)
}

// notAUser refuses an address that has a user already: an email belongs to one user
// of one account, and accepting the invitation would fail.
func notAUser(ctx context.Context, s tidings.Store, a *tidings.Account, email string) error {
	u, err := s.FindUserByEmail(ctx, email)
	switch {
	case tidings.ErrorCode(err) == tidings.ENotFound:
		return nil
	case err != nil:
		return err
	case u.AccountID == a.ID:
		return tidings.Errorf(tidings.EConflict, "%s is a member of account %s already", u.Email, a.Name)
	}
	return tidings.Errorf(tidings.EConflict, "%s is a user of another account already (an email signs in to one account)", u.Email)
}

// firstOwner is the account's oldest owner, in whose name the CLI invites: an
// invitation works while the member who made it is in the account.
func firstOwner(ctx context.Context, s tidings.Store, a *tidings.Account) (*tidings.User, error) {
	us, err := s.ListUsers(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if u.Role == tidings.UserOwner {
			return u, nil
		}
	}
	return nil, tidings.Errorf(tidings.EValidation,
		"account %s has no owner yet, and an invitation is made in an owner's name: create one with `tidings user create EMAIL --role owner --account %s`", a.Name, a.Name)
}

// inviteList prints the pending invitations and reset links, newest first.
func inviteList(ctx context.Context, c *cli, _ []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		invs, err := s.ListInvites(ctx, a.ID, time.Now())
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "ID\tEMAIL\tROLE\tEXPIRES")
		}
		for _, inv := range invs {
			email, role := inv.Email, inv.Role
			if inv.ResetUser != 0 {
				email, role = inv.ResetEmail, "reset"
			}
			if email == "" {
				email = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", inv.ID, email, role, inv.ExpiresAt.UTC().Format(time.RFC3339))
		}
		return w.Flush()
	})
}

func inviteRevoke(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		err := s.RevokeInvite(ctx, a.ID, args[0])
		if tidings.ErrorCode(err) == tidings.ENotFound {
			return tidings.Errorf(tidings.ENotFound, "no pending invitation with the id %s (tidings invite list shows them)", args[0])
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "revoked %s\n", args[0])
		return nil
	})
}
