// The account and user commands: tidings account …, tidings user ….

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/password"
)

// findAccount resolves --account, or the only account when it was left out.
func findAccount(ctx context.Context, s tidings.Store, name string) (*tidings.Account, error) {
	if name != "" {
		return s.FindAccount(ctx, name)
	}
	all, err := s.ListAccounts(ctx)
	if err != nil {
		return nil, err
	}
	switch len(all) {
	case 1:
		return all[0], nil
	case 0:
		return nil, errors.New("there is no account yet: create one with `tidings account create NAME`")
	}
	return nil, fmt.Errorf("%d accounts exist: say which with --account NAME", len(all))
}

func accountCreate(ctx context.Context, c *cli, args []string) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		a, err := s.CreateAccount(ctx, args[0])
		if err == nil {
			fmt.Fprintf(c.stdout, "created account %s\n", a.Name)
		}
		return err
	})
}

func accountList(ctx context.Context, c *cli, _ []string) error {
	return withReadStore(ctx, c, func(s tidings.Store) error {
		all, err := s.ListAccounts(ctx)
		for _, a := range all {
			fmt.Fprintf(c.stdout, "%s\t%s\n", a.Name, a.CreatedAt.Format(time.RFC3339))
		}
		return err
	})
}

func userCreate(ctx context.Context, c *cli, args []string) error {
	email := strings.TrimSpace(args[0])
	if !strings.Contains(email, "@") || strings.ContainsAny(email, " \t\r\n") {
		return fmt.Errorf("%q is not an email address", email)
	}
	if c.role != tidings.UserOwner && c.role != tidings.UserMember {
		return fmt.Errorf("--role must be owner or member")
	}
	hash, err := readPassword(c, "user create")
	if err != nil {
		return err
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		u := &tidings.User{AccountID: a.ID, Email: email, PasswordHash: hash, Role: c.role}
		if err := s.CreateUser(ctx, u); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "created %s %s in account %s\n", u.Role, u.Email, a.Name)
		return nil
	})
}

// readPassword reads a password from the first line of standard input and hashes it.
func readPassword(c *cli, cmd string) (string, error) {
	line, err := bufio.NewReader(c.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("give the password on standard input, for example: echo 'secret…' | tidings %s …", cmd)
	}
	return password.Hash(strings.TrimRight(line, "\r\n"))
}

// isTerminal reports whether w is a terminal (a person reads it, not a script).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func userList(ctx context.Context, c *cli, _ []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		us, err := s.ListUsers(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "EMAIL\tROLE\tCREATED")
		}
		for _, u := range us {
			fmt.Fprintf(w, "%s\t%s\t%s\n", u.Email, u.Role, u.CreatedAt.Format(time.RFC3339))
		}
		return w.Flush()
	})
}

func userResetPassword(ctx context.Context, c *cli, args []string) error {
	hash, err := readPassword(c, "user reset-password")
	if err != nil {
		return err
	}
	return withStore(ctx, c, func(s tidings.Store) error {
		u, err := s.FindUserByEmail(ctx, strings.TrimSpace(args[0]))
		if tidings.ErrorCode(err) == tidings.ENotFound {
			return fmt.Errorf("no user with the email %s (tidings user list shows them)", args[0])
		}
		if err != nil {
			return err
		}
		if err := s.SetPassword(ctx, u.ID, hash, nil); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "set the password of %s and signed them out everywhere\n", u.Email)
		return nil
	})
}

func userDelete(ctx context.Context, c *cli, args []string) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		u, err := s.FindUserByEmail(ctx, strings.TrimSpace(args[0]))
		if tidings.ErrorCode(err) == tidings.ENotFound {
			return fmt.Errorf("no user with the email %s (tidings user list shows them)", args[0])
		}
		if err != nil {
			return err
		}
		if u.Role == tidings.UserOwner {
			all, err := s.ListUsers(ctx, u.AccountID)
			if err != nil {
				return err
			}
			owners := 0
			for _, o := range all {
				if o.Role == tidings.UserOwner {
					owners++
				}
			}
			if owners == 1 {
				return fmt.Errorf("%s is the account's only owner: create another owner first (tidings user create EMAIL --role owner)", u.Email)
			}
		}
		if err := s.DeleteUser(ctx, u.AccountID, u.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted user %s and signed them out everywhere\n", u.Email)
		return nil
	})
}

// givenString is a string flag that remembers it was given: an empty value is then a
// mistake to say, not "leave it as it is".
type givenString struct {
	v   *string
	set *bool
}

func (f givenString) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f givenString) Set(s string) error {
	*f.v, *f.set = s, true
	return nil
}

func userNotifyFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.StringVar(&c.project, "project", "", "the project (required)")
	fs.StringVar(&c.channel, "channel", "", "one channel of the project, when it differs from the project")
	fs.Var(givenString{&c.by, &c.bySet}, "by",
		"`routes`: push, email, push,email or none (a member who chose nothing gets push); for a channel also project (follow the project's choice again)")
	fs.Var(givenString{&c.digest, &c.digestSet}, "digest", "the project's digest by email: `off|daily|weekly`")
}

// followProject is --by's value that makes a channel follow its project's routes again.
const followProject = "project"

// userNotify sets a member's routes for a project or a channel and their digest of the
// project, and prints what they are; with neither --by nor --digest it only prints.
func userNotify(ctx context.Context, c *cli, args []string) error {
	email := strings.TrimSpace(args[0])
	if c.project == "" {
		return tidings.Errorf(tidings.EValidation, "--project is required: the project whose notifications to choose")
	}
	var routes *tidings.Routes // nil with --by project: the channel's choice is forgotten
	if c.bySet {
		if strings.ToLower(strings.TrimSpace(c.by)) == followProject {
			if c.channel == "" {
				return tidings.Errorf(tidings.EValidation, "--by project is for a channel (--channel C): it follows the project's routes again")
			}
		} else {
			r, err := tidings.ParseRoutes(c.by)
			if err != nil {
				return flagError(err, "by")
			}
			routes = &r
		}
	}
	every := ""
	if c.digestSet {
		d, err := tidings.ParseDigest(c.digest)
		if err != nil || strings.TrimSpace(c.digest) == "" {
			return tidings.Errorf(tidings.EValidation, "--digest must be off, daily or weekly (got %q)", c.digest)
		}
		every = d
	}
	with := withAccount
	if !c.bySet && !c.digestSet {
		with = withReadAccount
	}
	return with(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		u, err := s.FindUserByEmail(ctx, email)
		if tidings.ErrorCode(err) == tidings.ENotFound || (err == nil && u.AccountID != a.ID) {
			return tidings.Errorf(tidings.ENotFound, "%s is not a member of account %s (tidings user list shows them)", email, a.Name)
		}
		if err != nil {
			return err
		}
		// Both checked before anything is saved: a wrong channel saves no digest either.
		chs, err := s.ListChannels(ctx, a.ID, c.project)
		if err != nil {
			return err
		}
		if c.channel != "" && !slices.ContainsFunc(chs, func(ch *tidings.Channel) bool { return ch.Name == c.channel }) {
			return tidings.ChannelNotFound(c.project, c.channel)
		}
		if c.bySet {
			if err := s.SetRoutes(ctx, a.ID, u.ID, c.project, c.channel, routes); err != nil {
				return err
			}
		}
		if c.digestSet {
			if err := s.SetDigest(ctx, a.ID, u.ID, c.project, every); err != nil {
				return flagError(err, "digest")
			}
		}
		line, err := memberRoutes(ctx, s, a.ID, u, c.project, c.channel)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, line)
		return nil
	})
}

// memberRoutes is a member's notification settings for a project, as user notify
// prints them: "ada@example.com: shop by push; shop/#payments by email; digest weekly"
// (the project's routes and each channel's own), or for one channel
// "ada@example.com: shop/#deploys by push (as the project); digest off".
func memberRoutes(ctx context.Context, s tidings.Store, account int64, u *tidings.User, project, channel string) (string, error) {
	saved, err := s.AccountRoutes(ctx, account)
	if err != nil {
		return "", err
	}
	digests, err := s.MemberDigests(ctx, account, u.ID)
	if err != nil {
		return "", err
	}
	var parts []string
	if channel != "" {
		part := fmt.Sprintf("%s/#%s by %s", project, channel, tidings.RoutesFor(saved, u.ID, project, channel))
		if !slices.ContainsFunc(saved, func(m *tidings.MemberRoute) bool {
			return m.UserID == u.ID && m.Project == project && m.Channel == channel
		}) {
			part += " (as the project)"
		}
		parts = append(parts, part)
	} else {
		parts = append(parts, fmt.Sprintf("%s by %s", project, tidings.RoutesFor(saved, u.ID, project, "")))
		var own []*tidings.MemberRoute
		for _, m := range saved {
			if m.UserID == u.ID && m.Project == project && m.Channel != "" {
				own = append(own, m)
			}
		}
		slices.SortFunc(own, func(a, b *tidings.MemberRoute) int { return strings.Compare(a.Channel, b.Channel) })
		for _, m := range own {
			parts = append(parts, fmt.Sprintf("%s/#%s by %s", project, m.Channel, m.Routes))
		}
	}
	every := digests[project]
	if every == "" {
		every = tidings.DigestOff
	}
	parts = append(parts, "digest "+every)
	return u.Email + ": " + strings.Join(parts, "; "), nil
}
