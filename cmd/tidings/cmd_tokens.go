// The API token commands: tidings token ….

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidings-dev/tidings"
)

func tokenCreate(ctx context.Context, c *cli, _ []string) error {
	if c.access == "" {
		return errors.New("--access is required: public (may only publish) or full (may also read)")
	}
	var roles []string
	for _, r := range strings.Split(c.roles, ",") {
		if r = strings.TrimSpace(r); r != "" {
			roles = append(roles, r)
		}
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		id, secret, hash := tidings.NewTokenSecret()
		t := &tidings.Token{ID: id, AccountID: a.ID, Name: c.name, Access: c.access, Project: c.project,
			Channel: c.channel, Roles: roles, Hash: hash}
		if err := s.CreateToken(ctx, t); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, secret)
		return nil
	})
}

func tokenList(ctx context.Context, c *cli, _ []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ts, err := s.ListTokens(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) { // scripts read one line per token, id first (the contract)
			fmt.Fprintln(w, "ID\tNAME\tACCESS\tLIMITS\tCREATED\tLAST USED\tSTATE\tROLES")
		}
		for _, t := range ts {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, orDash(t.Name), t.Access, limits(t),
				t.CreatedAt.Format(time.RFC3339), when(t.LastUsedAt, "never-used"), when(t.RevokedAt, "active"),
				strings.Join(t.Roles, ","))
		}
		return w.Flush()
	})
}

func limits(t *tidings.Token) string {
	switch {
	case t.Channel != "":
		return "project=" + t.Project + ",channel=" + t.Channel
	case t.Project != "":
		return "project=" + t.Project
	}
	return "all-projects"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func when(t time.Time, zero string) string {
	if t.IsZero() {
		return zero
	}
	return t.Format(time.RFC3339)
}

func tokenRevoke(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.RevokeToken(ctx, a.ID, args[0], time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "revoked token %s\n", args[0])
		return nil
	})
}
