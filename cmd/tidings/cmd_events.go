// Deleting what was published: tidings event delete, tidings insight delete.

package main

import (
	"context"
	"fmt"

	"github.com/tidings-dev/tidings"
)

func eventDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ev, err := s.FindEventByID(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		if err := s.DeleteEvent(ctx, a.ID, ev.Project, ev.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted event %s (%q in %s #%s)\n", ev.ID, ev.Event, ev.Project, ev.Channel)
		return nil
	})
}

func insightDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.DeleteInsight(ctx, a.ID, args[0], args[1]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted insight %q of project %s with its history\n", args[1], args[0])
		return nil
	})
}
