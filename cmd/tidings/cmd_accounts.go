// The account and user commands: tidings account …, tidings user ….

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
