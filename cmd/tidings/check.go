package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// errInconsistent makes `tidings check` exit 1 after it listed what it found.
type errInconsistent struct{ n int64 }

func (e errInconsistent) Error() string {
	return fmt.Sprintf("%d inconsistencies found", e.n)
}

// check runs the store's consistency check and prints each inconsistency: kind, ids,
// expected, found.
func check(ctx context.Context, c *cli, _ []string) error {
	s, err := openReadOnlyFor(ctx, c.cfg, c.full)
	if err != nil {
		return err
	}
	return errors.Join(func() error {
		start := time.Now()
		r, err := s.Check(ctx)
		if err != nil {
			return err
		}
		took := time.Since(start).Round(time.Millisecond)
		if c.verbose {
			for i, k := range r.Checks {
				fmt.Fprintf(c.stderr, "%-20s %v\n", k, r.Took[i].Round(time.Millisecond))
			}
		}
		if r.OK() {
			fmt.Fprintf(c.stdout, "ok: %d events, %d checks (%s), no inconsistency, in %s\n", r.Events, len(r.Checks), strings.Join(r.Checks, ", "), took)
			return nil
		}
		for _, p := range r.Problems {
			fmt.Fprintf(c.stdout, "%s\t%s\texpected %s\tfound %s\n", p.Kind, p.Where, p.Expected, p.Found)
		}
		n := int64(len(r.Problems)) + r.Omitted
		if r.Omitted > 0 {
			fmt.Fprintf(c.stdout, "… and %d more (at most %d are listed per kind)\n", r.Omitted, tidings.MaxReported)
		}
		return errInconsistent{n}
	}(), s.Close())
}
