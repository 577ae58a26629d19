// Acting on what was published: tidings event ack, tidings event delete, tidings insight delete.

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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

// eventAck acknowledges an event and prints its acknowledgement (the first one, when
// it was acknowledged before), one line: "ID acknowledged by BY at RFC3339", then
// " (already: the first acknowledgement stays)" when this one changed nothing.
func eventAck(ctx context.Context, c *cli, args []string) error {
	by := c.by
	if by == "" {
		by = "CLI"
		if u := os.Getenv("USER"); u != "" {
			by = u + " (CLI)"
		}
	}
	if utf8.RuneCountInString(by) > 128 || strings.ContainsFunc(by, unicode.IsControl) {
		return tidings.Errorf(tidings.EValidation, "--by must be at most 128 characters, without control characters")
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ev, first, err := s.AcknowledgeEvent(ctx, a.ID, args[0], by, time.Now().UTC())
		if err != nil {
			return err
		}
		if ev.Ack == nil {
			return fmt.Errorf("event %s: the store answered without its acknowledgement", ev.ID)
		}
		already := ""
		if !first {
			already = " (already: the first acknowledgement stays)"
		}
		fmt.Fprintf(c.stdout, "%s acknowledged by %s at %s%s\n", ev.ID, ev.Ack.By, ev.Ack.At.UTC().Format(time.RFC3339), already)
		return nil
	})
}
